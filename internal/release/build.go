package release

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Platforms are the GOOS/GOARCH pairs a release builds by default.
var Platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// Options say what to release.
type Options struct {
	Meta
	// Source is the module's directory (the repository's root).
	Source string
	// Out is the directory the artifacts are written to; it is emptied
	// first.
	Out string
	// Platforms to build, GOOS/GOARCH; default Platforms. The image is
	// made when both linux/amd64 and linux/arm64 are among them.
	Platforms []string
	// Image is the reference the image is tagged with in its layout and
	// its docker archives; default landlord:VERSION.
	Image string
	// Go is the go command; default "go".
	Go string
}

// Artifacts is what Release wrote, as paths relative to Options.Out.
type Artifacts struct {
	Binaries map[string]string // platform → the binary, in its archive's directory
	Archives []string          // .tar.gz, one per platform
	SBOMs    []string          // .cdx.json, one per platform
	Layout   string            // the OCI layout directory; "" without the image
	Docker   []string          // `docker load` archives, one per architecture
	Sums     string            // SHA256SUMS
	// ImageDigest is the image index's digest.
	ImageDigest string
}

// ErrVersion means the version is not a semantic version with a v.
var ErrVersion = errors.New("release: the version must be a semantic version such as v1.2.3 or v1.2.3-rc.1")

var semver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// Release builds every artifact of o into o.Out.
func Release(ctx context.Context, o Options) (*Artifacts, error) {
	if !semver.MatchString(o.Version) {
		return nil, fmt.Errorf("%w: %q", ErrVersion, o.Version)
	}
	if o.Commit == "" || o.Date.IsZero() {
		return nil, errors.New("release: the commit and its date are required")
	}
	if len(o.Platforms) == 0 {
		o.Platforms = Platforms
	}
	if o.Image == "" {
		o.Image = "landlord:" + o.Version
	}
	if o.Go == "" {
		o.Go = "go"
	}
	// Out is emptied: never the source, nor a directory that holds it.
	out, err1 := filepath.Abs(o.Out)
	src, err2 := filepath.Abs(o.Source)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(out, src); err == nil && !strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("release: the output directory %s holds the source %s, and is emptied first: choose another, such as dist", out, src)
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	a := &Artifacts{Binaries: map[string]string{}}
	linux := map[string][]byte{}
	for _, p := range o.Platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			return nil, fmt.Errorf("release: platform %q: want GOOS/GOARCH", p)
		}
		base := fmt.Sprintf("landlord_%s_%s_%s", strings.TrimPrefix(o.Version, "v"), goos, goarch)
		bin := filepath.Join(base, "landlord")
		if err := o.Build(ctx, goos, goarch, filepath.Join(o.Out, bin)); err != nil {
			return nil, err
		}
		a.Binaries[p] = bin
		if err := o.archive(base); err != nil {
			return nil, err
		}
		a.Archives = append(a.Archives, base+".tar.gz")
		sbom, err := SBOM(filepath.Join(o.Out, bin), o.Meta)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(o.Out, base+".cdx.json"), sbom, 0o644); err != nil {
			return nil, err
		}
		a.SBOMs = append(a.SBOMs, base+".cdx.json")
		if goos == "linux" && slices.Contains(ImageArchs, goarch) {
			if linux[goarch], err = os.ReadFile(filepath.Join(o.Out, bin)); err != nil {
				return nil, err
			}
		}
	}
	if len(linux) == len(ImageArchs) {
		if err := o.image(a, linux); err != nil {
			return nil, err
		}
	}
	if err := a.writeSums(o.Out); err != nil {
		return nil, err
	}
	return a, nil
}

// Build builds cmd/landlord of o.Source for goos/goarch into out, as a
// release does: static, -trimpath, stripped, o.Meta stamped.
func (o Options) Build(ctx context.Context, goos, goarch, out string) error {
	pkg := "github.com/jaxxstorm/landlord/internal/build"
	ldflags := strings.Join([]string{"-s", "-w",
		"-X", pkg + ".version=" + o.Version,
		"-X", pkg + ".commit=" + o.Commit,
		"-X", pkg + ".date=" + o.Date.UTC().Format("2006-01-02T15:04:05Z"),
	}, " ")
	cmd := exec.CommandContext(ctx, cmp.Or(o.Go, "go"), "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, "./cmd/landlord")
	cmd.Dir = o.Source
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-mod=readonly")
	if goarch == "amd64" {
		cmd.Env = append(cmd.Env, "GOAMD64=v1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("release: go build %s/%s: %w\n%s", goos, goarch, err, out)
	}
	return nil
}

// archive writes base.tar.gz of the directory base (the binary) with the
// licence and README beside it.
func (o Options) archive(base string) error {
	bin, err := os.ReadFile(filepath.Join(o.Out, base, "landlord"))
	if err != nil {
		return err
	}
	entries := []tarEntry{
		tarDir(base, 0o755, 0),
		tarFile(base+"/landlord", 0o755, bin),
	}
	for _, doc := range []string{"LICENSE", "README.md"} {
		b, err := os.ReadFile(filepath.Join(o.Source, doc))
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		entries = append(entries, tarFile(base+"/"+doc, 0o644, b))
	}
	t, err := writeTar(o.Date, entries)
	if err != nil {
		return fmt.Errorf("release: %s: %w", base, err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(t); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.Out, base+".tar.gz"), gz.Bytes(), 0o644)
}

// image writes the image index of the linux binaries as an OCI layout and
// a docker archive per architecture.
func (o Options) image(a *Artifacts, linux map[string][]byte) error {
	idx, err := Index(linux, o.Meta)
	if err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	a.ImageDigest = d.String()
	a.Layout = "landlord_" + strings.TrimPrefix(o.Version, "v") + "_image"
	if err := WriteLayout(filepath.Join(o.Out, a.Layout), idx, o.Image); err != nil {
		return err
	}
	for _, arch := range ImageArchs {
		img, err := Image(linux[arch], arch, o.Meta)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("landlord_%s_image_linux_%s.docker.tar", strings.TrimPrefix(o.Version, "v"), arch)
		if err := WriteDockerArchive(filepath.Join(o.Out, name), img, o.Image); err != nil {
			return err
		}
		a.Docker = append(a.Docker, name)
	}
	return nil
}

// writeSums writes SHA256SUMS of the archives, SBOMs and docker archives,
// in `sha256sum -c` form, sorted by name.
func (a *Artifacts) writeSums(dir string) error {
	names := slices.Concat(a.Archives, a.SBOMs, a.Docker)
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		content, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(content)
		b.WriteString(hex.EncodeToString(sum[:]) + "  " + n + "\n")
	}
	a.Sums = "SHA256SUMS"
	return os.WriteFile(filepath.Join(dir, a.Sums), []byte(b.String()), 0o644)
}
