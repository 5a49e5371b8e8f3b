package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/sqlite"
)

func TestBackupCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "landlord.db")
	s, err := sqlite.Open(t.Context(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	out := filepath.Join(dir, "copy.db")
	res := mustRunCLI(t, nil, exitOK, "", "backup", "--database", db, out)
	if !strings.Contains(res.stdout, "integrity checked") {
		t.Errorf("backup: %q", res.stdout)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the copy: %v %v", st, err)
	}
	res = mustRunCLI(t, nil, exitFailure, "", "backup", "--database", db, out)
	if !strings.Contains(res.stderr, "exists") {
		t.Errorf("a second backup to the same file: %q", res.stderr)
	}
	res = mustRunCLI(t, nil, exitUsage, "", "backup", "--database", "postgres://db.internal/landlord", filepath.Join(dir, "pg"))
	if !strings.Contains(res.stderr, "pg_dump") {
		t.Errorf("a PostgreSQL backup: %q", res.stderr)
	}
	mustRunCLI(t, nil, exitUsage, "", "backup")
	// To standard output: the same database, whole.
	res = mustRunCLI(t, nil, exitOK, "", "backup", "--database", db, "-")
	streamed := filepath.Join(dir, "streamed.db")
	if err := os.WriteFile(streamed, []byte(res.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := sqlite.Open(t.Context(), streamed, sqlite.Options{}); err != nil {
		t.Errorf("the streamed backup does not open: %v", err)
	} else {
		s.Close()
	}
	if !strings.Contains(res.stderr, "integrity checked") {
		t.Errorf("backup -: %q", res.stderr)
	}
}
