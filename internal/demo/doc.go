// Package demo is landlord's demo workload: an image landlord builds on a
// Docker Engine from its own binary, with no registry and no Dockerfile, so
// that a quickstart runs tenants on any machine with an Engine, and the
// small web page that binary serves inside it (`landlord demo serve`).
//
// The image (DefaultRef, landlord.local/demo:local) holds one file, the
// landlord binary as /landlord, which must be a static Linux executable of
// the Engine's architecture (CGO_ENABLED=0); it runs as nobody (65534),
// serves on $PORT or 8080, and is handed to the Engine as a `docker save`
// archive through the Engine's image load API. The archive is written from
// the binary as it is streamed; nothing is built on the Engine. The image
// records a digest of its binary in the label landlord.demo.binary, and Load
// leaves an image whose label matches alone, so loading again is a no-op
// until the binary changes; the image it replaces is removed unless a
// container still uses it.
//
// The page shows the tenant's name (the first argument, since a container
// cannot otherwise know it), the other arguments, the container's host
// name and start time, and the names of its environment variables, never
// their values: secrets reach a container as environment variables too,
// and from inside it nothing tells a secret from a plain variable.
package demo
