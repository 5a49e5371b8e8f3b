package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// TestBackupUnderWrites: backups taken while tenants are being created
// are each whole (integrity checked), open as landlord databases, and hold
// a prefix of the creates: every tenant created before the backup began,
// none half-written.
func TestBackupUnderWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "landlord.db")
	s, err := sqlite.Open(ctx, src, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var created atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Create(ctx, &tenant.Tenant{Name: fmt.Sprintf("t-%d", i), Provider: "mock", ComputeConfig: []byte(`{"image":"a"}`)}, "test"); err != nil {
				t.Errorf("create: %v", err)
				return
			}
			created.Add(1)
		}
	}()
	for i := range 5 {
		before := created.Load()
		dest := filepath.Join(dir, fmt.Sprintf("backup-%d.db", i))
		info, err := sqlite.Backup(ctx, src, dest)
		if err != nil {
			t.Fatal(err)
		}
		after := created.Load()
		if info.Tenants < int(before) || info.Tenants > int(after)+1 || info.SchemaVersion < 10 || info.Size == 0 {
			t.Errorf("backup %d: %+v, with %d..%d tenants created around it", i, info, before, after)
		}
		st, err := os.Stat(dest)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("backup %d: %v, mode %v, want 0600: it holds secrets", i, err, st.Mode().Perm())
		}
		restored, err := sqlite.Open(ctx, dest, sqlite.Options{})
		if err != nil {
			t.Fatalf("open the backup: %v", err)
		}
		page, err := restored.List(ctx, tenant.ListOptions{PageSize: 1000})
		restored.Close()
		if err != nil || len(page.Tenants) != min(info.Tenants, 1000) {
			t.Errorf("the backup lists %d tenants (%v), its info says %d", len(page.Tenants), err, info.Tenants)
		}
	}
	close(stop)
	wg.Wait()
	if created.Load() == 0 {
		t.Fatal("nothing was written during the backups")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if filepath.Ext(e.Name()) == "" || e.Name()[0] == '.' {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestBackupRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "landlord.db")
	s, err := sqlite.Open(ctx, src, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Backup(ctx, src, existing); !errors.Is(err, sqlite.ErrBackupExists) {
		t.Errorf("over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Error("the existing file was changed")
	}
	if _, err := sqlite.Backup(ctx, filepath.Join(dir, "absent.db"), filepath.Join(dir, "b.db")); err == nil {
		t.Error("a backup of no database")
	}
	if _, err := os.Stat(filepath.Join(dir, "absent.db")); err == nil {
		t.Error("the backup created its source")
	}
	if _, err := sqlite.Backup(ctx, existing, filepath.Join(dir, "c.db")); err == nil {
		t.Error("a backup of a file that is not a landlord database")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}
