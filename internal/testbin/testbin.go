// Package testbin finds the real servers that testservers/build builds for
// the provider tests (the Kubernetes control plane, the Nomad agent), and
// turns their absence into a skip that says how to build them, or into a
// failure where a variable requires them (as CI sets).
package testbin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ErrAbsent marks a server set that is not built: a skip, unless required.
var ErrAbsent = errors.New("not built")

// Find returns the directory of the server set named set (such as
// "nomad-v1.10.0") holding every one of binaries, executable: the directory
// envBin names, else set's directory in the cache testservers/build writes
// (LANDLORD_TESTBIN, else landlord/testbin in the user's cache). A set
// that is not there wraps ErrAbsent.
func Find(envBin, set string, binaries ...string) (string, error) {
	dir := os.Getenv(envBin)
	if dir == "" {
		cache := os.Getenv("LANDLORD_TESTBIN")
		if cache == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				return "", fmt.Errorf("%w: no cache directory: %w", ErrAbsent, err)
			}
			cache = filepath.Join(base, "landlord", "testbin")
		}
		dir = filepath.Join(cache, set)
	}
	for _, b := range binaries {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: no executable %s in %s", ErrAbsent, b, dir)
		}
	}
	return dir, nil
}

// Report fails t for err, prefixed with who, unless err wraps ErrAbsent:
// then it skips t, saying fix, or fails it when the variable envRequire is
// true.
func Report(t testing.TB, who string, err error, envRequire, fix string) {
	t.Helper()
	if !errors.Is(err, ErrAbsent) {
		t.Fatalf("%s: %v", who, err)
	}
	v := os.Getenv(envRequire)
	required, perr := strconv.ParseBool(v)
	switch {
	case v == "":
		t.Skipf("%s: %v.\n%s\n(%s=1 makes this a failure.)", who, err, fix, envRequire)
	case perr != nil:
		t.Fatalf("%s: %v.\n%s\n%s=%q is not a boolean.", who, err, fix, envRequire, v)
	case required:
		t.Fatalf("%s: %v.\n%s\n%s is set, which makes this a failure rather than a skip.", who, err, fix, envRequire)
	default:
		t.Skipf("%s: %v.\n%s", who, err, fix)
	}
}

// LogTail returns the last n lines of the log at path, without the blank
// ones it ends with, for a server's failure to quote; none when the log is
// empty.
func LogTail(path string, n int) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, nil
	}
	lines := strings.Split(s, "\n")
	return lines[max(0, len(lines)-n):], nil
}
