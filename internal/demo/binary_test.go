package demo

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Only a static Linux executable of the Engine's architecture can be the
// image's entrypoint; the error says how to build one.
func TestCheckBinary(t *testing.T) {
	static := mustTiny(t, "")
	text := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(text, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	cases := []struct {
		name, path, arch string
		is               error
	}{
		{"static, this architecture", static, runtime.GOARCH, nil},
		{"static, another architecture", static, other, ErrNotLinux},
		{"an architecture landlord does not know", static, "mips64", ErrNotLinux},
		{"not an ELF file", text, runtime.GOARCH, ErrNotLinux},
		{"missing", filepath.Join(t.TempDir(), "nothing"), runtime.GOARCH, ErrNotLinux},
	}
	// The C library's users are dynamically linked where it is shared, as
	// on the Linux distributions CI runs.
	if sh, err := filepath.EvalSymlinks("/bin/sh"); err == nil && runtime.GOOS == "linux" {
		cases = append(cases, struct {
			name, path, arch string
			is               error
		}{"dynamically linked", sh, runtime.GOARCH, ErrNotStatic})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckBinary(c.path, c.arch)
			if !errors.Is(err, c.is) || (c.is == nil) != (err == nil) {
				t.Fatalf("CheckBinary = %v, want %v", err, c.is)
			}
			if err != nil && c.arch != "mips64" && !strings.Contains(err.Error(), "CGO_ENABLED=0 GOOS=linux GOARCH="+c.arch) {
				t.Errorf("the error does not say how to build a binary that fits: %v", err)
			}
		})
	}
}
