package release

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's user, directories and port.
const (
	// UID and GID are the image's user, landlord (no shell, no home but
	// its data directory); not root, and not nobody (65534), whose files
	// any other nobody process could touch.
	UID = 65532
	GID = 65532
	// DataDir is the working directory, where the SQLite database goes by
	// default, owned by UID: mount a volume there.
	DataDir = "/var/lib/landlord"
	// Port is the port the image serves the API on (LANDLORD_LISTEN).
	Port = 8080
	// Source is the repository the image's source label names.
	Source = "https://github.com/jaxxstorm/landlord"
)

// ImageArchs are the architectures of the image index.
var ImageArchs = []string{"amd64", "arm64"}

// Meta says which landlord an artifact is.
type Meta struct {
	// Version is the release's version (v1.2.3); Commit the full revision.
	Version, Commit string
	// Date is the commit's time: every file time and the image's created.
	Date time.Time
}

// Image is landlord's image for one architecture: the static binary at
// /landlord (bin, of GOOS linux and GOARCH arch), an /etc/passwd and
// /etc/group naming the user, and DataDir owned by it, in one layer. It
// runs `landlord serve` as UID:GID on 0.0.0.0:Port (LANDLORD_LISTEN, which
// beats listen: in a configuration file: set the variable to move it),
// which landlord refuses
// to do without credentials (tokens, TLS client roles or OIDC) and TLS or
// trusted proxies: the configuration comes from the environment or a file
// mounted at /etc/landlord/landlord.yaml. No shell: nothing else is in it.
func Image(bin []byte, arch string, m Meta) (v1.Image, error) {
	layerTar, err := imageLayer(bin, m.Date)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("release: image layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: m.Date}, CreatedBy: "landlord tools/releaser", Comment: "the landlord binary, its user and its data directory",
	}})
	if err != nil {
		return nil, fmt.Errorf("release: image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	if arch == "arm64" {
		cf.Variant = "v8"
	}
	cf.Created = v1.Time{Time: m.Date}
	cf.Config = v1.Config{
		User:         fmt.Sprintf("%d:%d", UID, GID),
		Entrypoint:   []string{"/landlord"},
		Cmd:          []string{"serve"},
		WorkingDir:   DataDir,
		Env:          []string{"LANDLORD_LISTEN=0.0.0.0:" + fmt.Sprint(Port)},
		ExposedPorts: map[string]struct{}{fmt.Sprintf("%d/tcp", Port): {}},
		Volumes:      map[string]struct{}{DataDir: {}},
		Labels:       Labels(m),
		StopSignal:   "SIGTERM",
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("release: image config: %w", err)
	}
	return mutate.Annotations(img, Labels(m)).(v1.Image), nil
}

// Labels are the image's OCI labels (and its manifest's annotations).
func Labels(m Meta) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "landlord",
		"org.opencontainers.image.description": "A tenant provisioning control plane: one dedicated deployment per customer on Docker, ECS, Kubernetes or Nomad",
		"org.opencontainers.image.version":     m.Version,
		"org.opencontainers.image.revision":    m.Commit,
		"org.opencontainers.image.created":     m.Date.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.url":         Source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
}

// Index is the multi-architecture image: one Image per architecture of
// bins (GOARCH to binary), in ImageArchs order.
func Index(bins map[string][]byte, m Meta) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range ImageArchs {
		bin, ok := bins[arch]
		if !ok {
			return nil, fmt.Errorf("release: image: no linux/%s binary", arch)
		}
		img, err := Image(bin, arch, m)
		if err != nil {
			return nil, err
		}
		p := &v1.Platform{OS: "linux", Architecture: arch}
		if arch == "arm64" {
			p.Variant = "v8"
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	return mutate.Annotations(idx, Labels(m)).(v1.ImageIndex), nil
}

// WriteLayout writes idx as an OCI image layout in dir (for `crane push`,
// `skopeo copy oci:DIR docker://…`, `oras`), tagged ref in index.json.
func WriteLayout(dir string, idx v1.ImageIndex, ref string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("release: image layout: %w", err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return fmt.Errorf("release: image layout: %w", err)
	}
	return nil
}

// WriteDockerArchive writes img as a `docker load` archive tagged ref.
func WriteDockerArchive(path string, img v1.Image, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("release: %q: %w", ref, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("release: docker archive: %w", err)
	}
	return nil
}

// imageLayer is the image's one layer.
func imageLayer(bin []byte, date time.Time) ([]byte, error) {
	user := fmt.Sprintf("landlord:x:%d:%d:landlord:%s:/sbin/nologin\n", UID, GID, DataDir)
	group := fmt.Sprintf("landlord:x:%d:\n", GID)
	b, err := writeTar(date, []tarEntry{
		tarDir("etc", 0o755, 0),
		tarFile("etc/group", 0o644, []byte("root:x:0:\n"+group)),
		tarFile("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\n"+user)),
		tarFile("landlord", 0o755, bin),
		tarDir("tmp", 0o1777, 0),
		tarDir("var", 0o755, 0),
		tarDir("var/lib", 0o755, 0),
		tarDir("var/lib/landlord", 0o750, UID),
	})
	if err != nil {
		return nil, fmt.Errorf("release: image layer: %w", err)
	}
	return b, nil
}

// tarEntry is one file or directory of a tar.
type tarEntry struct {
	h       *tar.Header
	content []byte
}

// tarDir is a directory of mode owned by uid and gid owner.
func tarDir(path string, mode int64, owner int) tarEntry {
	return tarEntry{&tar.Header{Name: path + "/", Typeflag: tar.TypeDir, Mode: mode, Uid: owner, Gid: owner}, nil}
}

// tarFile is a file of mode owned by root.
func tarFile(path string, mode int64, content []byte) tarEntry {
	return tarEntry{&tar.Header{Name: path, Typeflag: tar.TypeReg, Mode: mode}, content}
}

// writeTar is a tar of entries, each with the time date and no owner
// names, in the order given.
func writeTar(date time.Time, entries []tarEntry) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := *e.h
		h.ModTime, h.Format, h.Size = date, tar.FormatPAX, int64(len(e.content))
		if err := tw.WriteHeader(&h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
