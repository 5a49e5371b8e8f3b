package testbin_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/testbin"
)

// Find looks in the directory the variable names, else in the set's
// directory of the cache, and wants every binary there, executable.
func TestFind(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("LANDLORD_TESTBIN", cache)
	t.Setenv("LANDLORD_TESTBIN_TEST_DIR", "")
	set := filepath.Join(cache, "srv-v1")
	if err := os.MkdirAll(set, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"a": 0o755, "b": 0o644} {
		if err := os.WriteFile(filepath.Join(set, name), nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	if dir, err := testbin.Find("LANDLORD_TESTBIN_TEST_DIR", "srv-v1", "a"); err != nil || dir != set {
		t.Errorf("Find a = %q, %v; want %s", dir, err, set)
	}
	for _, missing := range [][]string{{"a", "b"}, {"c"}} {
		if _, err := testbin.Find("LANDLORD_TESTBIN_TEST_DIR", "srv-v1", missing...); !errors.Is(err, testbin.ErrAbsent) || !strings.Contains(err.Error(), set) {
			t.Errorf("Find %v = %v; want ErrAbsent naming %s", missing, err, set)
		}
	}
	other := t.TempDir()
	t.Setenv("LANDLORD_TESTBIN_TEST_DIR", other)
	if _, err := testbin.Find("LANDLORD_TESTBIN_TEST_DIR", "srv-v1", "a"); !errors.Is(err, testbin.ErrAbsent) || !strings.Contains(err.Error(), other) {
		t.Errorf("Find in the variable's directory = %v; want ErrAbsent naming %s", err, other)
	}
}

func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	if err := os.WriteFile(log, []byte("one\ntwo\nthree\nfour\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := testbin.LogTail(log, 2); err != nil || strings.Join(got, ",") != "three,four" {
		t.Errorf("LogTail(2) = %q, %v; want three, four", got, err)
	}
	if got, err := testbin.LogTail(log, 10); err != nil || len(got) != 4 {
		t.Errorf("LogTail(10) = %q, %v; want the 4 lines", got, err)
	}
	empty := filepath.Join(dir, "empty.log")
	if err := os.WriteFile(empty, []byte("\n \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := testbin.LogTail(empty, 2); err != nil || got != nil {
		t.Errorf("LogTail of an empty log = %q, %v; want none", got, err)
	}
	if _, err := testbin.LogTail(filepath.Join(dir, "missing.log"), 2); err == nil {
		t.Error("LogTail of a missing log: no error")
	}
}
