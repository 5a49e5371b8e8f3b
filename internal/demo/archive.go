package demo

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"time"
)

// DefaultRef is the reference the demo image is loaded under. Its registry
// part, landlord.local, resolves nowhere, so the image can only come from
// Load, never from a pull of someone else's repository.
const DefaultRef = "landlord.local/demo:local"

// Port is the port the demo page is served on unless $PORT says otherwise.
const Port = 8080

// Image labels.
const (
	// LabelBinary records the image's layout and the digest of its binary:
	// an image with the label Load would write is up to date.
	LabelBinary = "landlord.demo.binary"
	// layout versions how the image is made from the binary; a change to
	// the config or layer makes images of older layouts out of date.
	layout = "1"
)

// entrypoint runs the binary's demo server.
var entrypoint = []string{"/landlord", "demo", "serve"}

// archive is the demo image as a `docker save` archive: manifest.json, the
// image config and one layer holding the binary. It is written from the
// binary as it is streamed; newArchive reads the binary once to learn the
// digests the manifest and config name.
type archive struct {
	ref    string // the tag it loads as
	binary string // path of the binary
	size   int64  // its size

	label        string // LabelBinary's value
	layerDigest  string // "sha256:…" of the layer tar, its diff id
	layerSize    int64
	config       []byte
	configDigest string
}

// newArchive reads the binary at path and prepares the archive of the image
// ref for arch, created at created.
func newArchive(path, ref, arch string, created time.Time) (*archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	a := &archive{ref: ref, binary: path, size: st.Size()}
	binSum, layerSum := sha256.New(), sha256.New()
	counted := &countingWriter{w: layerSum}
	if err := writeLayer(counted, io.TeeReader(f, binSum), a.size); err != nil {
		return nil, fmt.Errorf("demo: read %s: %w", path, err)
	}
	a.layerDigest, a.layerSize = digest(layerSum), counted.n
	a.label = layout + ":" + digest(binSum)
	a.config, err = imageConfig(arch, created, a.label, a.layerDigest)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(a.config)
	a.configDigest = "sha256:" + hex.EncodeToString(sum[:])
	return a, nil
}

// imageConfig is the image's config (the Docker image spec's JSON).
func imageConfig(arch string, created time.Time, label, layerDigest string) ([]byte, error) {
	stamp := created.UTC().Format(time.RFC3339)
	cfg := map[string]any{
		"architecture": arch,
		"os":           "linux",
		"created":      stamp,
		"config": map[string]any{
			"User":         "65534:65534",
			"Entrypoint":   entrypoint,
			"ExposedPorts": map[string]any{fmt.Sprintf("%d/tcp", Port): map[string]any{}},
			"Labels": map[string]string{
				LabelBinary:                      label,
				"org.opencontainers.image.title": "landlord demo",
				"org.opencontainers.image.description": "landlord's demo workload, built by landlord demo image from its own binary: " +
					"a page with the tenant's name and its environment variables' names",
			},
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
		"history": []map[string]string{{"created": stamp, "created_by": "landlord demo image"}},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("demo: image config: %w", err)
	}
	return b, nil
}

// writeLayer writes the layer tar: the binary as /landlord, with fixed
// owner, mode and time, so that one binary always makes the same layer.
func writeLayer(w io.Writer, binary io.Reader, size int64) error {
	tw := tar.NewWriter(w)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: "landlord", Mode: 0o755, Size: size, ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if n, err := io.Copy(tw, binary); err != nil {
		return err
	} else if n != size {
		return fmt.Errorf("the binary changed while it was read (%d bytes, not %d)", n, size)
	}
	return tw.Close()
}

// writeTo writes the archive, reading the binary again; it fails when the
// binary changed since newArchive read it.
func (a *archive) writeTo(w io.Writer) error {
	f, err := os.Open(a.binary)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer f.Close()
	tw := tar.NewWriter(w)
	layerName := hexOf(a.layerDigest) + "/layer.tar"
	configName := hexOf(a.configDigest) + ".json"
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: layerName, Mode: 0o644, Size: a.layerSize, ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	layerSum := sha256.New()
	if err := writeLayer(io.MultiWriter(tw, layerSum), f, a.size); err != nil {
		return fmt.Errorf("demo: read %s: %w", a.binary, err)
	}
	if got := digest(layerSum); got != a.layerDigest {
		return fmt.Errorf("demo: %s changed while the image was made; run again", a.binary)
	}
	manifest, err := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{a.ref}, "Layers": []string{layerName}}})
	if err != nil {
		return err
	}
	for _, file := range []struct {
		name string
		data []byte
	}{{configName, a.config}, {"manifest.json", manifest}} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: file.name, Mode: 0o644, Size: int64(len(file.data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := tw.Write(file.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

func digest(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

func hexOf(digest string) string { return digest[len("sha256:"):] }

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
