package demo

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// The archive is what `docker save` writes: manifest.json naming the
// config and the one layer by digest and tagging the image, a config that
// runs /landlord demo serve as nobody with the binary's label, and a layer
// holding exactly the binary at /landlord. One binary makes one image.
func TestArchive(t *testing.T) {
	bin := mustTiny(t, "")
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, err := newArchive(bin, "landlord.local/demo:local", "amd64", created)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	files := untar(t, buf.Bytes())
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest.json: %v: %s", err, files["manifest.json"])
	}
	m := manifest[0]
	if !slices.Equal(m.RepoTags, []string{"landlord.local/demo:local"}) || len(m.Layers) != 1 {
		t.Errorf("manifest %+v, want the tag and one layer", m)
	}
	config, layer := files[m.Config], files[m.Layers[0]]
	if got := sha256hex(config) + ".json"; got != m.Config {
		t.Errorf("the config is named %s, its digest makes %s", m.Config, got)
	}
	var cfg struct {
		Architecture, OS, Created string
		Config                    struct {
			User       string
			Entrypoint []string
			Labels     map[string]string
		}
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Architecture != "amd64" || cfg.OS != "linux" || cfg.Created != "2026-01-02T03:04:05Z" || cfg.Config.User != "65534:65534" ||
		!slices.Equal(cfg.Config.Entrypoint, []string{"/landlord", "demo", "serve"}) {
		t.Errorf("config %s", config)
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if want := layout + ":sha256:" + sha256hex(binary); cfg.Config.Labels[LabelBinary] != want {
		t.Errorf("label %s = %q, want %q", LabelBinary, cfg.Config.Labels[LabelBinary], want)
	}
	if want := []string{"sha256:" + sha256hex(layer)}; !slices.Equal(cfg.RootFS.DiffIDs, want) || m.Layers[0] != want[0][len("sha256:"):]+"/layer.tar" {
		t.Errorf("diff ids %q and layer %s, want %q", cfg.RootFS.DiffIDs, m.Layers[0], want)
	}
	inLayer := untarHeaders(t, layer)
	if len(inLayer) != 1 || inLayer[0].Name != "landlord" || inLayer[0].Mode != 0o755 || inLayer[0].Uid != 0 {
		t.Errorf("the layer holds %+v, want landlord, 0755, owned by root", inLayer)
	}
	if got := untar(t, layer)["landlord"]; !bytes.Equal(got, binary) {
		t.Errorf("the layer's landlord is %d bytes, not the binary's %d", len(got), len(binary))
	}

	again, err := newArchive(bin, "landlord.local/demo:local", "amd64", created)
	if err != nil {
		t.Fatal(err)
	}
	if again.configDigest != a.configDigest || again.layerDigest != a.layerDigest {
		t.Error("the same binary made another image")
	}
	other, err := newArchive(mustTiny(t, "changed"), "landlord.local/demo:local", "amd64", created)
	if err != nil {
		t.Fatal(err)
	}
	if other.label == a.label || other.layerDigest == a.layerDigest {
		t.Error("another binary made an image with the same label or layer")
	}
}

// A binary that changes between the two reads fails the write, rather
// than loading a layer that is not the one the config names.
func TestArchiveBinaryChanged(t *testing.T) {
	bin := mustTiny(t, "")
	a, err := newArchive(bin, "landlord.local/demo:local", "amd64", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.writeTo(io.Discard); err == nil || !strings.Contains(err.Error(), "changed while the image was made") {
		t.Errorf("writeTo after the binary changed = %v", err)
	}
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func untar(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = data
	}
}

func untarHeaders(t *testing.T, b []byte) []*tar.Header {
	t.Helper()
	var hs []*tar.Header
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hs
		}
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
}
