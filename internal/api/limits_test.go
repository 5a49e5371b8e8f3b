package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// endless is a 256 MiB request body: one JSON string that never ends.
type endless struct{ sent atomic.Int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.sent.Load() == 0 && len(p) > 0 {
		n := copy(p, `{"name":"acme","compute_config":{"image":"`)
		e.sent.Add(int64(n))
		return n, nil
	}
	for i := range p {
		p[i] = 'a'
	}
	if e.sent.Add(int64(len(p))) > 256<<20 {
		return len(p), io.EOF
	}
	return len(p), nil
}

func TestOversizedBodyIsNotRead(t *testing.T) {
	ts := newServer(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	body := &endless{}
	req, err := http.NewRequest("POST", ts.URL+"/v1/tenants", body) // chunked: no Content-Length
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := ts.Client().Do(req)
	if err == nil {
		defer res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	runtime.ReadMemStats(&after)
	// The server reads at most its 1 MiB limit of a 256 MiB body; what the
	// whole process allocated stays far below the body's size.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("serving a 256 MiB body allocated %d MiB", grew>>20)
	}
	if sent := body.sent.Load(); sent >= 256<<20 {
		t.Errorf("the client sent the whole body (%d MiB): the server read it all", sent>>20)
	}
}

func TestReadyzNamesTheFailingCheck(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "l.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p, _ := mock.New(mock.Options{})
	reg := compute.NewRegistry()
	_ = reg.Register(p)
	m, _ := compute.NewManager(reg, compute.ManagerOptions{})
	s, err := api.New(api.Options{Store: store, Compute: m, Ready: map[string]func(context.Context) error{
		"controller": func(context.Context) error { return errors.New("no leader: lease table locked by pid 4242") },
	}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, mustRequest(t, "GET", "/readyz"))
	var h wire.Health
	_ = json.Unmarshal(rec.Body.Bytes(), &h)
	if rec.Code != 503 || h.Checks["controller"] != "failing" || h.Checks["database"] != "ok" {
		t.Errorf("readyz: %d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "4242") {
		t.Errorf("readyz leaks the internal error: %s", rec.Body)
	}
}

func mustRequest(t *testing.T, method, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
