package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// Health probes come every few seconds from every load balancer and
// orchestrator: one that passes is logged at DEBUG, so that the INFO log
// holds what people did. A probe that fails stays at INFO.
func TestHealthProbesLogAtDebug(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := computetest.Manager(t, p, compute.ManagerOptions{})
	logs := &providertest.LogBuffer{}
	var failing atomic.Bool
	s, err := api.New(api.Options{Store: store, Compute: m, Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Ready: map[string]func(context.Context) error{"switch": func(context.Context) error {
			if failing.Load() {
				return context.DeadlineExceeded
			}
			return nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	get := func(path string, want int) {
		t.Helper()
		res, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	get("/healthz", http.StatusOK)
	get("/readyz", http.StatusOK)
	get("/v1/tenants", http.StatusOK)
	failing.Store(true)
	get("/readyz", http.StatusServiceUnavailable)

	type line struct {
		Level  string `json:"level"`
		Msg    string `json:"msg"`
		Path   string `json:"path"`
		Status int    `json:"status"`
	}
	var got []string
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if l.Msg == "request" {
			got = append(got, l.Level+" "+l.Path+" "+http.StatusText(l.Status))
		}
	}
	want := []string{"DEBUG /healthz OK", "DEBUG /readyz OK", "INFO /v1/tenants OK", "INFO /readyz Service Unavailable"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("request lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRefusedCreateLogsItsTenantID: a create refused once its tenant is
// made (a name taken, a database that cannot take it) logs the id it drew,
// as every log line about a tenant carries its id.
func TestRefusedCreateLogsItsTenantID(t *testing.T) {
	ts := newServer(t)
	body := `{"name":"acme","compute_config":{"image":"a:1"}}`
	for _, want := range []int{http.StatusCreated, http.StatusConflict} {
		if res := ts.do(t, "POST", "/v1/tenants", "application/json", body); res.status != want {
			t.Fatalf("create: %d %s, want %d", res.status, res.body, want)
		}
	}
	var ids []string
	sc := bufio.NewScanner(strings.NewReader(ts.logs.String()))
	for sc.Scan() {
		var l struct {
			Msg      string `json:"msg"`
			Method   string `json:"method"`
			Status   int    `json:"status"`
			TenantID string `json:"tenant_id"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "request" && l.Method == "POST" {
			if l.TenantID == "" {
				t.Errorf("the request line of a create answered %d names no tenant: %s", l.Status, sc.Bytes())
			}
			ids = append(ids, l.TenantID)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("%d request lines for the creates, want 2:\n%s", len(ids), ts.logs)
	}
}
