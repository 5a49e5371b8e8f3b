// Package release makes landlord's release artifacts from one commit, with
// no Makefile and no network: a binary per platform (CGO_ENABLED=0,
// -trimpath, the version, commit and date set in internal/build), a
// .tar.gz of each with the licence and README, a CycloneDX SBOM of the
// modules each binary links, the container image (an OCI image index of
// linux/amd64 and linux/arm64, written as an OCI layout and as a `docker
// load` archive per architecture), and SHA256SUMS over them all.
//
// Everything is reproducible: file times are the commit's, tar headers
// carry no owner names, gzip headers no name or time, and the image's
// created time is the commit's, so two runs on one commit with one Go
// release give the same bytes and the same image digest. tools/releaser is
// the command; docs/operations.md says how to cut a release.
package release
