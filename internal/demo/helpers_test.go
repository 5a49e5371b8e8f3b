package demo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
)

// tinyBinary is ./testdata/tiny built as a static Linux binary, once per
// test binary.
var tinyBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "landlord-demo-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "tiny")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./testdata/tiny")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./testdata/tiny: %w: %s", err, out)
	}
	return bin, nil
})

// TestMain sweeps what ended runs left (containers named
// landlord-test-demo-<run>, see dockertest.Main) and ends this run.
func TestMain(m *testing.M) {
	code := dockertest.Main(m, "landlord-test-demo")
	if bin, err := tinyBinary(); err == nil {
		_ = os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// mustTiny returns a copy of the tiny binary in a directory of the test's,
// with extra appended (a different binary when extra differs).
func mustTiny(t *testing.T, extra string) string {
	t.Helper()
	src, err := tinyBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "landlord")
	if err := os.WriteFile(dst, append(b, extra...), 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}
