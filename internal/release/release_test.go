package release

import (
	"archive/tar"
	"compress/gzip"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/types"
)

var testMeta = Meta{Version: "v1.2.3", Commit: strings.Repeat("c0", 20), Date: time.Date(2026, 11, 28, 22, 5, 0, 0, time.UTC)}

// TestIndex: the image index holds an image per architecture, each as
// the package doc says (its user, entrypoint, labels, files), and the same
// binaries and commit make the same digest.
func TestIndex(t *testing.T) {
	bins := map[string][]byte{"amd64": []byte("amd64 binary"), "arm64": []byte("arm64 binary")}
	idx, err := Index(bins, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Index(bins, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of one commit: %s and %s", d1, d2)
	}
	later := testMeta
	later.Date = later.Date.Add(time.Second)
	other, _ := Index(bins, later)
	if d3, _ := other.Digest(); d3 == d1 {
		t.Error("another commit's date made the same digest")
	}
	if mt, _ := idx.MediaType(); mt != types.OCIImageIndex {
		t.Errorf("index media type %s", mt)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 || im.Annotations["org.opencontainers.image.revision"] != testMeta.Commit {
		t.Fatalf("index: %+v", im)
	}
	for i, arch := range ImageArchs {
		desc := im.Manifests[i]
		if desc.Platform == nil || desc.Platform.OS != "linux" || desc.Platform.Architecture != arch {
			t.Errorf("manifest %d: platform %+v", i, desc.Platform)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if cf.Architecture != arch || c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != "/landlord" || strings.Join(c.Cmd, " ") != "serve" ||
			c.WorkingDir != DataDir || c.Labels["org.opencontainers.image.version"] != "v1.2.3" || c.Labels["org.opencontainers.image.source"] != Source ||
			!cf.Created.Equal(testMeta.Date) {
			t.Errorf("%s config: %+v", arch, cf)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("%s: %d layers, %v", arch, len(layers), err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]*tar.Header{}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Name == "landlord" {
				b, _ := io.ReadAll(tr)
				if string(b) != string(bins[arch]) {
					t.Errorf("%s: /landlord is not its binary", arch)
				}
			}
			files[h.Name] = h
		}
		rc.Close()
		if h := files["landlord"]; h == nil || h.Mode != 0o755 || h.Uid != 0 {
			t.Errorf("%s: /landlord %+v", arch, h)
		}
		if h := files["var/lib/landlord/"]; h == nil || h.Uid != UID || h.Mode != 0o750 {
			t.Errorf("%s: the data directory %+v", arch, h)
		}
		for name, h := range files {
			if !h.ModTime.Equal(testMeta.Date) || h.Uname != "" {
				t.Errorf("%s: %s has time %v, owner %q", arch, name, h.ModTime, h.Uname)
			}
			if strings.HasPrefix(name, "bin/") || name == "bin/sh" {
				t.Errorf("%s: a shell in the image: %s", arch, name)
			}
		}
	}
	if _, err := Index(map[string][]byte{"amd64": nil}, testMeta); err == nil {
		t.Error("an index without arm64")
	}
}

// TestSBOM lists every module the binary links, as its build information
// records them, with package URLs, and says the same of the same binary.
// The binary is tools/releaser's, built here: a test binary records no
// modules.
func TestSBOM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	self := filepath.Join(t.TempDir(), "releaser")
	build := exec.Command("go", "build", "-o", self, "./tools/releaser")
	build.Dir = moduleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := SBOM(self, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := SBOM(self, testMeta)
	if string(out) != string(again) {
		t.Error("two SBOMs of one binary differ")
	}
	var bom struct {
		BOMFormat, SpecVersion, SerialNumber string
		Metadata                             struct {
			Component struct{ Name, Version, Purl string }
		}
		Components   []struct{ Type, Name, Version, Purl string }
		Dependencies []struct {
			Ref       string
			DependsOn []string
		}
	}
	if err := json.Unmarshal(out, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion != "1.5" || !strings.HasPrefix(bom.SerialNumber, "urn:uuid:") ||
		bom.Metadata.Component.Purl != "pkg:golang/github.com/jaxxstorm/landlord@v1.2.3" {
		t.Errorf("bom: %s", out[:min(len(out), 600)])
	}
	info, err := buildinfo.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	purls := map[string]bool{}
	for _, c := range bom.Components {
		purls[c.Purl] = true
	}
	// Spelled out, not through goPurl: a module this test links.
	if !purls["pkg:golang/github.com/google/go-containerregistry@v0.22.1"] {
		t.Errorf("no component pkg:golang/github.com/google/go-containerregistry@v0.22.1 among %d", len(purls))
	}
	if !purls["pkg:golang/stdlib@"+strings.TrimPrefix(info.GoVersion, "go")] {
		t.Error("no standard library component")
	}
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		if !purls[goPurl(d.Path, d.Version)] {
			t.Errorf("%s@%s is linked and not listed", d.Path, d.Version)
		}
	}
	if len(info.Deps) < 5 || len(bom.Components) != len(info.Deps)+1 || len(bom.Dependencies) != 1 || len(bom.Dependencies[0].DependsOn) != len(bom.Components) {
		t.Errorf("%d components, %d modules linked", len(bom.Components), len(info.Deps))
	}
	if got := goPurl("github.com/Foo/bar baz", "v1.0.0+incompatible"); got != "pkg:golang/github.com/Foo/bar%20baz@v1.0.0%2Bincompatible" {
		t.Errorf("goPurl: %s", got)
	}
}

func TestReleaseRefusesToEmptyTheSource(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{src, filepath.Dir(src)} {
		if _, err := Release(t.Context(), Options{Meta: testMeta, Source: src, Out: out}); err == nil || !strings.Contains(err.Error(), "holds the source") {
			t.Errorf("out %s: %v", out, err)
		}
	}
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		t.Errorf("the source is gone: %v", err)
	}
}

func TestReleaseRefusesBadVersions(t *testing.T) {
	for _, v := range []string{"", "1.2.3", "v1.2", "v01.2.3", "latest"} {
		_, err := Release(t.Context(), Options{Meta: Meta{Version: v, Commit: "c", Date: time.Now()}, Out: t.TempDir()})
		if !errors.Is(err, ErrVersion) {
			t.Errorf("version %q: %v", v, err)
		}
	}
}

// TestRelease runs the release for this machine's Linux platform: the
// archive holds the binary, the licence and the README; the binary says
// its version; the SBOM is beside it; SHA256SUMS checks with sha256sum's
// own rules; and no image is made without both architectures.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds landlord")
	}
	out := t.TempDir()
	platform := "linux/" + runtime.GOARCH
	a, err := Release(t.Context(), Options{Meta: testMeta, Source: moduleRoot(t), Out: out, Platforms: []string{platform}})
	if err != nil {
		t.Fatal(err)
	}
	base := "landlord_1.2.3_linux_" + runtime.GOARCH
	if len(a.Archives) != 1 || a.Archives[0] != base+".tar.gz" || a.Layout != "" || len(a.Docker) != 0 {
		t.Errorf("artifacts: %+v", a)
	}
	f, err := os.Open(filepath.Join(out, a.Archives[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if want := []string{base + "/", base + "/landlord", base + "/LICENSE", base + "/README.md"}; !slices.Equal(names, want) {
		t.Errorf("the archive holds %v, want %v", names, want)
	}
	if runtime.GOOS == "linux" {
		v, err := exec.Command(filepath.Join(out, a.Binaries[platform]), "version").Output()
		if err != nil || !strings.HasPrefix(string(v), "landlord v1.2.3 (commit c0c0c0c0c0c0, built 2026-11-28T22:05:00Z, ") {
			t.Errorf("landlord version: %q, %v", v, err)
		}
	}
	if sha, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command(sha, "--check", "--strict", a.Sums)
		cmd.Dir = out
		if res, err := cmd.CombinedOutput(); err != nil || strings.Count(string(res), ": OK") != 2 {
			t.Errorf("sha256sum --check: %v\n%s", err, res)
		}
	}
}
