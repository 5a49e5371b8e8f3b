package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/ui"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

const (
	adminToken  = "admin-token-0123456789"
	readerToken = "reader-token-0123456789"
)

var tokens = []api.Token{{Name: "ops", Secret: adminToken, Role: api.RoleAdmin}, {Name: "support", Secret: readerToken, Role: api.RoleReader}}

// site is the API and the console on a SQLite store and a provider, as
// landlord serve puts them together.
type site struct {
	*httptest.Server
	store *sqlite.Store
	// db is the site's database, whichever it is.
	db siteStore
	// ctrl runs the controller when started.
	manager *compute.Manager
}

type siteOptions struct {
	tokens   []api.Token
	verifier identity.TokenVerifier
	provider provider.Provider
}

func newSite(t testing.TB, opts siteOptions) *site {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s := newSiteOn(t, store, opts)
	s.store = store
	return s
}

// siteStore is what a site needs of its database.
type siteStore interface {
	tenant.Store
	fleet.Store
	tenant.KeyStore
	tenant.ChangeFeed
	identity.SessionStore
}

// newSiteOn is a site on store: one replica of landlord, when other sites
// share its database.
func newSiteOn(t testing.TB, store siteStore, opts siteOptions) *site {
	t.Helper()
	ctx := context.Background()
	var err error
	p := opts.provider
	if p == nil {
		if p, err = mock.New(mock.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	m := computetest.Manager(t, p, compute.ManagerOptions{})
	apiOpts := api.Options{Store: store, Fleet: store, Compute: m, Tokens: opts.tokens, Verifier: opts.verifier}
	if es, ok := store.(events.Store); ok {
		// Webhooks on, to receivers on this machine; secrets stored as
		// they are (no key), so that tests can compare them.
		apiOpts.Events, apiOpts.EventEncoder, apiOpts.EventGuard = es, &events.Encoder{Source: "test"}, loopbackGuard()
	}
	server, err := api.New(apiOpts)
	if err != nil {
		t.Fatal(err)
	}
	key, err := store.Key(ctx, "console-session")
	if err != nil {
		t.Fatal(err)
	}
	console, err := ui.New(ui.Options{API: server.Handler(), SessionKey: key, Sessions: store, Changes: store.Changes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(console.Close)
	mux := http.NewServeMux()
	mux.Handle(ui.Prefix, server.Wrap(console))
	mux.Handle("/", server.Handler())
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(console.Close) // before ts.Close: live streams end first
	return &site{Server: ts, db: store, manager: m}
}

// TestMain stops the PostgreSQL server that tests of replicas start.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// runController reconciles the site's tenants until the test ends.
func (s *site) runController(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := controller.New(s.store, s.manager, controller.Options{Leases: s.store, LeaseTTL: 2 * time.Second, Plans: s.store, Logger: slog.New(slog.DiscardHandler)})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// createTenant creates a tenant through the API, as ops.
func (s *site) createTenant(t testing.TB, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/v1/tenants", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ ID string }
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 201 || json.Unmarshal(b, &out) != nil {
		t.Fatalf("create: %d %s", res.StatusCode, b)
	}
	return out.ID
}

// patchTenant changes a tenant through the API with a merge patch, as ops.
func (s *site) patchTenant(t testing.TB, id, patch string) {
	t.Helper()
	req, _ := http.NewRequest("PATCH", s.URL+"/v1/tenants/"+id, strings.NewReader(patch))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("patch: %d %s", res.StatusCode, b)
	}
}

// browser is a user of the console: a cookie jar that does not follow
// redirects, so that tests see them.
type browser struct {
	t    testing.TB
	site *site
	http *http.Client
}

func (s *site) browser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, site: s, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status   int
	header   http.Header
	body     string
	location string
}

func (b *browser) get(path string) page {
	b.t.Helper()
	return b.do("GET", path, nil)
}

// post sends a form, with the CSRF token of the page at from unless the
// form has one.
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	return b.do("POST", path, form)
}

func (b *browser) do(method, path string, form url.Values) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.site.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(raw), location: res.Header.Get("Location")}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the session, read from a page's form.
func (b *browser) csrf(path string) string {
	b.t.Helper()
	m := csrfInput.FindStringSubmatch(b.get(path).body)
	if m == nil {
		b.t.Fatalf("%s has no form with a CSRF token", path)
	}
	return m[1]
}

func (b *browser) signIn(token string) page {
	b.t.Helper()
	return b.post("/ui/signin", url.Values{"csrf": {b.csrf("/ui/signin")}, "token": {token}, "next": {"/ui/"}})
}
