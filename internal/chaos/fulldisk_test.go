package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestFullDisk runs `landlord serve` on SQLite on a small tmpfs, fills the
// disk, and checks that writes then fail with 503 storage_unavailable and
// Retry-After (never 500), that /readyz turns unready, that nothing is
// half-written, and that once space is freed both recover without a
// restart.
func TestFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	l := servetest.New(t, servetest.Options{Config: "compute:\n  mock: {}\n"})
	dir := l.Dir()
	config, err := os.ReadFile(filepath.Join(dir, "landlord.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(dir, "landlord.yaml"), config, 0o600); err != nil {
		t.Fatal(err)
	}
	l.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tenants := l.Client().Tenants()
	servetest.CreateTenant(ctx, t, tenants, "before", json.RawMessage(`{"image": "app:1"}`))

	// Fill the disk but for a little room.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()

	// Creates with large configs until the database cannot take one.
	big := strings.Repeat("x", 16<<10)
	var failed *http.Response
	var failedName string
	for i := 0; i < 200 && failed == nil; i++ {
		name := fmt.Sprintf("full-%03d", i)
		res := post(t, l.Addr(), fmt.Sprintf(`{"name": %q, "compute_config": {"image": "app:1", "env": {"BIG": %q}}}`, name, big))
		switch res.StatusCode {
		case http.StatusCreated:
		case http.StatusServiceUnavailable:
			failed, failedName = res, name
		default:
			t.Fatalf("create %s on a full disk: %d %s", name, res.StatusCode, body(res))
		}
	}
	if failed == nil {
		t.Fatal("the disk never filled up")
	}
	var p struct{ Code, Detail string }
	_ = json.Unmarshal([]byte(body(failed)), &p)
	if p.Code != "storage_unavailable" || failed.Header.Get("Retry-After") == "" {
		t.Errorf("a create on a full disk: code %q, Retry-After %q (%s)", p.Code, failed.Header.Get("Retry-After"), p.Detail)
	}
	if _, err := tenants.Get(ctx, failedName, llclient.GetOptions{}); !llclient.IsNotFound(err) {
		t.Errorf("the create refused for a full disk left a tenant behind: %v", err)
	}
	if code := readyz(t, l.Addr()); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz on a full disk: %d, want 503", code)
	}

	// Free the space: both recover, with no restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if code := readyz(t, l.Addr()); code != http.StatusOK {
		t.Errorf("/readyz once space is free: %d, want 200", code)
	}
	after := servetest.CreateTenant(ctx, t, tenants, "after", json.RawMessage(`{"image": "app:1"}`))
	if after.ID == "" {
		t.Error("no create once space is free")
	}
	if _, err := tenants.Get(ctx, "before", llclient.GetOptions{}); err != nil {
		t.Errorf("the tenant made before the disk filled: %v", err)
	}
}

func post(t *testing.T, addr, body string) *http.Response {
	t.Helper()
	res, err := http.Post("http://"+addr+"/v1/tenants", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func body(res *http.Response) string {
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func readyz(t *testing.T, addr string) int {
	t.Helper()
	res, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
