package ui_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// replicas are two landlord replicas (API and console each) sharing one
// database: two store handles on it, so that nothing one keeps in memory
// reaches the other.
func replicas(t *testing.T, db string) (a, b *site) {
	t.Helper()
	ctx := context.Background()
	var stores [2]siteStore
	switch db {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "landlord.db")
		for i := range stores {
			s, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores[i] = s
		}
	case "postgres":
		url := pgtest.NewDatabase(t)
		if url == "" {
			t.SkipNow()
		}
		for i := range stores {
			s, err := postgres.Open(ctx, url, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores[i] = s
		}
	}
	return newSiteOn(t, stores[0], siteOptions{tokens: tokens}), newSiteOn(t, stores[1], siteOptions{tokens: tokens})
}

// cookie is the browser's session cookie on its site.
func (b *browser) cookie() string {
	b.t.Helper()
	u, _ := url.Parse(b.site.URL + "/ui/")
	for _, c := range b.http.Jar.Cookies(u) {
		if c.Name == "landlord_session" {
			return c.Value
		}
	}
	b.t.Fatal("the browser has no session cookie")
	return ""
}

// copied is another browser, on site, holding a copy of a session cookie:
// what someone who took it from the user's browser has.
func (s *site) copied(t *testing.T, cookie string) *browser {
	b := s.browser(t)
	u, _ := url.Parse(s.URL + "/ui/")
	b.http.Jar.SetCookies(u, []*http.Cookie{{Name: "landlord_session", Value: cookie, Path: "/ui/"}})
	return b
}

// Signing out ends the session on the server, on every replica: a copy of
// its cookie is refused from then on, for reads and for forms. Signing out
// everywhere ends every session of that user, in every browser and on
// every replica, and no one else's.
func TestSignOutEndsTheSession(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			a, b := replicas(t, db)
			a.createTenant(t, `{"name":"acme","compute_config":{"image":"a"}}`)
			signedIn := func(br *browser) bool {
				t.Helper()
				p := br.get("/ui/")
				switch {
				case p.status == http.StatusOK && strings.Contains(p.body, `href="/ui/tenants/acme"`):
					return true
				case p.status == http.StatusSeeOther && strings.HasPrefix(p.location, "/ui/signin"):
					return false
				}
				t.Fatalf("GET /ui/: %d %s\n%s", p.status, p.location, p.body)
				return false
			}

			// Sign out: the copied cookie is refused by both replicas.
			ops := a.browser(t)
			if p := ops.signIn(adminToken); p.status != http.StatusSeeOther {
				t.Fatalf("sign in: %d", p.status)
			}
			csrf := ops.csrf("/ui/")
			stolen := ops.cookie()
			if !signedIn(b.copied(t, stolen)) {
				t.Fatal("a session of one replica is not honoured by the other")
			}
			if p := ops.post("/ui/signout", url.Values{"csrf": {csrf}}); p.status != http.StatusSeeOther || p.location != "/ui/signin" {
				t.Fatalf("sign out: %d %s", p.status, p.location)
			}
			for name, r := range map[string]*site{"a": a, "b": b} {
				thief := r.copied(t, stolen)
				if signedIn(thief) {
					t.Errorf("replica %s honours the cookie of a session signed out of", name)
				}
				if p := thief.post("/ui/tenants/acme/pause", url.Values{"csrf": {csrf}}); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/ui/signin") {
					t.Errorf("replica %s: a form sent with the copied cookie: %d %s", name, p.status, p.location)
				}
			}
			if got, err := a.storeOf(t).Get(context.Background(), "acme", tenant.GetOptions{}); err != nil || got.Annotations != nil {
				t.Errorf("the copied cookie paused the tenant: %v, %v", got.Annotations, err)
			}

			// Sign out everywhere: both of ops's sessions end, on both
			// replicas; support's does not.
			laptop, phone, support := a.browser(t), b.browser(t), b.browser(t)
			laptop.signIn(adminToken)
			phone.signIn(adminToken)
			support.signIn(readerToken)
			laptopCookie := laptop.cookie()
			if !signedIn(laptop) || !signedIn(phone) || !signedIn(support) {
				t.Fatal("a sign-in did not take")
			}
			p := phone.post("/ui/signout", url.Values{"csrf": {phone.csrf("/ui/")}, "scope": {"everywhere"}})
			if p.status != http.StatusSeeOther || p.location != "/ui/signin?ended=2" {
				t.Fatalf("sign out everywhere: %d %s", p.status, p.location)
			}
			if page := phone.get(p.location); !strings.Contains(page.body, "signed out of all 2 of your sessions") {
				t.Errorf("the sign-in page after signing out everywhere:\n%s", page.body)
			}
			if signedIn(laptop) || signedIn(phone) || signedIn(b.copied(t, laptopCookie)) {
				t.Error("a session of ops outlived signing out everywhere")
			}
			if !signedIn(support) {
				t.Error("signing ops out everywhere signed support out")
			}
		})
	}
}

// storeOf is the site's database, for reading what the console did.
func (s *site) storeOf(t *testing.T) tenant.Store {
	t.Helper()
	if s.db == nil {
		t.Fatal("the site has no store")
	}
	return s.db
}

// A page's live stream ends when its session is signed out of, here or
// elsewhere: it tells the page, and sends nothing more.
func TestLiveStreamEndsAtSignOut(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	id := s.createTenant(t, `{"name":"acme","compute_config":{"image":"a"}}`)
	b := s.browser(t)
	b.signIn(adminToken)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/ui/live?view=list&tenant="+id, nil)
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	next := func() string {
		t.Helper()
		for sc.Scan() {
			if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				return ev
			}
		}
		return "the end of the stream: " + errText(sc.Err())
	}
	if ev := next(); ev != "tenant" {
		t.Fatalf("the stream's first event: %s", ev)
	}
	// Signed out everywhere from another browser; then the tenant changes.
	other := s.browser(t)
	other.signIn(adminToken)
	if p := other.post("/ui/signout", url.Values{"csrf": {other.csrf("/ui/")}, "scope": {"everywhere"}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign out everywhere: %d", p.status)
	}
	s.patchTenant(t, id, `{"annotations":{"note":"changed"}}`)
	if ev := next(); ev != "signedout" {
		t.Errorf("after signing out, the stream sent %s, want signedout", ev)
	}
}

func errText(err error) string {
	if err == nil {
		return "EOF"
	}
	return err.Error()
}

// flakySessions is a SQLite store whose session records cannot be read
// while down is set: a database that does not answer.
type flakySessions struct {
	*sqlite.Store
	down atomic.Bool
}

func (f *flakySessions) Session(ctx context.Context, id string) (identity.Session, error) {
	if f.down.Load() {
		return identity.Session{}, fmt.Errorf("flaky: %w", tenant.ErrUnavailable)
	}
	return f.Store.Session(ctx, id)
}

// A session that cannot be checked is neither honoured nor ended: the page
// answers 503, and the user is still signed in once the database answers.
func TestSessionsUnreadableIs503(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	flaky := &flakySessions{Store: store}
	s := newSiteOn(t, flaky, siteOptions{tokens: tokens})
	b := s.browser(t)
	b.signIn(adminToken)
	flaky.down.Store(true)
	p := b.get("/ui/")
	if p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") == "" || !strings.Contains(p.body, "cannot reach its database to check your session") {
		t.Errorf("with the sessions unreadable: %d %q\n%s", p.status, p.header.Get("Retry-After"), p.body)
	}
	flaky.down.Store(false)
	if p := b.get("/ui/"); p.status != http.StatusOK {
		t.Errorf("once the database answers: %d %s", p.status, p.location)
	}
}
