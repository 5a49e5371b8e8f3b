package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// onEachStore runs f against a server on SQLite and one on PostgreSQL (a
// throwaway cluster, or LANDLORD_TEST_POSTGRES_URL; skipped without one
// unless LANDLORD_REQUIRE_POSTGRES=1).
func onEachStore(t *testing.T, f func(t *testing.T, ts *testServer)) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		f(t, serverOn(t, s))
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		if url == "" {
			t.SkipNow()
		}
		s, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		f(t, serverOn(t, s))
	})
}

// serverOn is newServer on the given store, with the mock provider
// without defaults.
func serverOn(t *testing.T, store tenant.Store) *testServer {
	t.Helper()
	return serveOn(t, store, func(logger *slog.Logger) (provider.Provider, error) {
		return mock.New(mock.Options{Logger: logger})
	})
}

// nested is a value n objects deep ({"a":{"a":…1…}}), or n arrays deep.
func nested(n int, arrays bool) string {
	if arrays {
		return strings.Repeat("[", n) + "1" + strings.Repeat("]", n)
	}
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// deepPointer is the pointer of the first container past the depth limit
// in a compute_config {"x-deep": nested(n, arrays)}: the body is level 1,
// compute_config 2, x-deep 3, and 62 levels below x-deep is level 65.
func deepPointer(arrays bool) string {
	step := "/a"
	if arrays {
		step = "/0"
	}
	return "/compute_config/x-deep" + strings.Repeat(step, 62)
}

// TestHostileBodiesOnEachStore: a body nested 1,000 or 9,990 deep (a 500
// from SQLite's json_valid, stored by PostgreSQL, before) and a body with a
// repeated key (stored verbatim by SQLite, before) are the same 422 naming
// the pointer on both stores, on every route that takes a body, and change
// nothing.
func TestHostileBodiesOnEachStore(t *testing.T) {
	onEachStore(t, func(t *testing.T, ts *testServer) {
		ts.create(t, "acme", `{"image":"a"}`)
		// 64 levels is the limit, not past it.
		ts.create(t, "deep64", `{"image":"a","x-deep":`+nested(62, false)+`}`)
		const js, merge = "application/json", "application/merge-patch+json"
		for _, tt := range []struct {
			name, method, path, contentType, body, pointer string
		}{
			{"create, config 1,000 deep", "POST", "/v1/tenants", js, `{"name":"deep","compute_config":{"image":"a","x-deep":` + nested(1000, false) + `}}`, deepPointer(false)},
			{"create, config 9,990 deep", "POST", "/v1/tenants", js, `{"name":"deep","compute_config":{"image":"a","x-deep":` + nested(9990, true) + `}}`, deepPointer(true)},
			{"create, 65 deep", "POST", "/v1/tenants", js, `{"name":"deep","compute_config":{"image":"a","x-deep":` + nested(63, false) + `}}`, deepPointer(false)},
			{"dry run, 9,990 deep", "POST", "/v1/tenants?dry_run=true", js, `{"name":"deep","compute_config":{"image":"a","x-deep":` + nested(9990, true) + `}}`, deepPointer(true)},
			{"replace, 1,000 deep", "PUT", "/v1/tenants/acme", js, `{"compute_config":{"image":"a","x-deep":` + nested(1000, false) + `}}`, deepPointer(false)},
			{"patch, 9,990 deep", "PATCH", "/v1/tenants/acme", merge, `{"compute_config":{"x-deep":` + nested(9990, true) + `}}`, deepPointer(true)},
			{"create, name twice", "POST", "/v1/tenants", js, `{"name":"dup","compute_config":{"image":"a"},"name":"dup2"}`, "/name"},
			{"create, a config key twice", "POST", "/v1/tenants", js, `{"name":"dup","compute_config":{"image":"a","image":"b"}}`, "/compute_config/image"},
			{"dry run, an escaped key twice", "POST", "/v1/tenants?dry_run=true", js, `{"name":"dup","compute_config":{"image":"a","env":{"A":"1","\u0041":"2"}}}`, "/compute_config/env/A"},
			{"replace, a label twice", "PUT", "/v1/tenants/acme", js, `{"compute_config":{"image":"a"},"labels":{"a/b":"1","a/b":"2"}}`, "/labels/a~1b"},
			{"patch, a key twice", "PATCH", "/v1/tenants/acme", merge, `{"compute_config":{"ports":[{"container_port":80,"container_port":81}]}}`, "/compute_config/ports/0/container_port"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := ts.do(t, tt.method, tt.path, tt.contentType, tt.body)
				p := res.problem(t)
				if res.status != http.StatusUnprocessableEntity || p.Code != wire.CodeInvalidBody || !slices.Equal(pointers(p), []string{tt.pointer}) {
					t.Fatalf("%d %s %v, want 422 %s at %s: %.300s", res.status, p.Code, pointers(p), wire.CodeInvalidBody, tt.pointer, res.body)
				}
			})
		}
		list := ts.do(t, "GET", "/v1/tenants", "", "")
		if strings.Contains(string(list.body), `"name":"deep"`) || strings.Contains(string(list.body), `"name":"dup`) {
			t.Errorf("a refused body was stored: %.500s", list.body)
		}
		if got := ts.do(t, "GET", "/v1/tenants/acme", "", "").tenant(t); got.Generation != 1 || got.Labels != nil {
			t.Errorf("a refused change was applied: %+v", got)
		}
	})
}

// hostileBody is 20 KB nested 9,990 deep, the body that cost ~105 MB to
// refuse (a 500) before the depth limit.
var hostileBody = `{"name":"deep","compute_config":{"image":"a","x-deep":` + nested(9990, true) + `}}`

// serveBody serves one POST /v1/tenants through h and returns the status.
func serveBody(h http.Handler, body string) int {
	req := httptest.NewRequest(http.MethodPost, "/v1/tenants", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestHostileBodyMemory: the 20 KB body nested 9,990 deep is refused
// having allocated tens of kilobytes, alone or 8 at once.
func TestHostileBodyMemory(t *testing.T) {
	h := newServer(t).Config.Handler
	if got := serveBody(h, hostileBody); got != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", got)
	}
	const rounds, parallel = 50, 8
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range rounds {
		var wg sync.WaitGroup
		for range parallel {
			wg.Go(func() { serveBody(h, hostileBody) })
		}
		wg.Wait()
	}
	runtime.ReadMemStats(&after)
	perRequest := (after.TotalAlloc - before.TotalAlloc) / (rounds * parallel)
	t.Logf("a %d-byte body nested 9,990 deep: %d bytes allocated per request (%d at once)", len(hostileBody), perRequest, parallel)
	if perRequest > 256<<10 {
		t.Errorf("refusing the body allocated %d KiB per request; want under 256 KiB", perRequest>>10)
	}
}

// BenchmarkHostileBodies measures what the API allocates to answer hostile
// bodies (B/op), with a valid dry run to compare.
func BenchmarkHostileBodies(b *testing.B) {
	var labels strings.Builder
	labels.WriteString(`{"name":"many","compute_config":{"image":"a"},"labels":{`)
	for i := range 20000 {
		if i > 0 {
			labels.WriteByte(',')
		}
		fmt.Fprintf(&labels, `"bad key %d!":"v"`, i)
	}
	labels.WriteString("}}")
	h := newServer(b).Config.Handler
	for _, bb := range []struct{ name, body string }{
		{"nested_9990_deep_20KB", hostileBody},
		{"nested_1000_deep", `{"name":"deep","compute_config":{"image":"a","x-deep":` + nested(1000, false) + `}}`},
		{"duplicate_keys", `{"name":"dup","compute_config":{"image":"a","image":"b"}}`},
		{"labels_20000_bad_keys", labels.String()},
		{"valid", `{"name":"acme","compute_config":{"image":"a","ports":[{"container_port":8080}]},"labels":{"tier":"gold"}}`},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/tenants?dry_run=true", strings.NewReader(bb.body))
				req.Header.Set("Content-Type", "application/json")
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
