// Package releasetest puts landlord's release image on the local Docker
// Engine for the tests that run it: on the Engine itself, on the
// Kubernetes test node, under the Nomad test agent.
package releasetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/release"
)

// LoadImage builds landlord as a release does (static, for linux on this
// machine's architecture, m stamped), makes its release image and loads it
// on the Engine as ref, removed when t ends. It returns the binary's path,
// from which a test may make the demo image too.
func LoadImage(ctx context.Context, t testing.TB, ref string, m release.Meta) string {
	t.Helper()
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/jaxxstorm/landlord").Output()
	if err != nil {
		t.Fatalf("releasetest: find the module: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "landlord")
	o := release.Options{Meta: m, Source: strings.TrimSpace(string(root))}
	if err := o.Build(ctx, "linux", runtime.GOARCH, bin); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	img, err := release.Image(content, runtime.GOARCH, m)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "image.tar")
	if err := release.WriteDockerArchive(archive, img, ref); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, "docker", "load", "--quiet", "--input", archive).CombinedOutput(); err != nil {
		t.Fatalf("docker load: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "--force", ref).Run() })
	return bin
}
