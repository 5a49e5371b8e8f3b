package servetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// binDirPrefix starts the name of every directory the binary is built into.
const binDirPrefix = "landlord-servetest-"

// built is the landlord binary of this test binary, built on first use.
var built struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the landlord binary, building it on the first
// call of this test binary; a build that fails fails tb, and every later
// caller too.
func Binary(tb testing.TB) string {
	tb.Helper()
	built.once.Do(func() { built.path, built.err = build() })
	if built.err != nil {
		tb.Fatalf("servetest: %v", built.err)
	}
	return built.path
}

// build removes what exited test binaries left and builds landlord into a
// new directory that this one holds until it exits.
func build() (string, error) {
	sweep(os.TempDir())
	dir, err := os.MkdirTemp("", binDirPrefix)
	if err != nil {
		return "", fmt.Errorf("build landlord: %w", err)
	}
	if err := hold(dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("build landlord: %w", err)
	}
	bin := filepath.Join(dir, "landlord")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/landlord")
	// Built in landlord's own module, whichever module's test asks: the
	// Terraform provider's module requires landlord's packages, not its
	// server's dependencies.
	cmd.Dir = moduleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build landlord: %w\n%s", err, out)
	}
	return bin, nil
}

// moduleRoot is the directory of landlord's module, two up from this
// file's.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
