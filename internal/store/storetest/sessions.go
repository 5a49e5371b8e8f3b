package storetest

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/identity"
)

// SessionOpener returns two handles on one new, empty database, as two
// landlord replicas sharing it have; the suite closes those that are
// io.Closers.
type SessionOpener func(t *testing.T) (replica1, replica2 identity.SessionStore)

// RunSessions checks the contract of identity.SessionStore against the
// stores open returns: a session is there until it is ended, alone or
// with every session of its holder, or expires, and ending one holder's
// sessions leaves the others'. Each session is created through one handle
// and read and ended through both, so that what one replica records or
// ends, the other sees at once: nothing is kept in a process.
func RunSessions(t *testing.T, open SessionOpener) {
	t.Run("Sessions", func(t *testing.T) {
		t.Parallel()
		a, b := open(t)
		for _, s := range []identity.SessionStore{a, b} {
			if c, ok := s.(io.Closer); ok {
				t.Cleanup(func() {
					if err := c.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				})
			}
		}
		testSessions(t, a, b)
	})
}

// testSessions creates sessions through a and reads and ends them through
// a and b alike.
func testSessions(t *testing.T, a, b identity.SessionStore) {
	// Times to the second, so that every store keeps them exactly.
	now := time.Now().UTC().Truncate(time.Second)
	session := func(id, holder string) identity.Session {
		return identity.Session{ID: id, Holder: holder, CreatedAt: now, ExpiresAt: now.Add(12 * time.Hour)}
	}
	mustCreateSession := func(sess identity.Session) {
		t.Helper()
		if err := a.CreateSession(ctx, sess); err != nil {
			t.Fatalf("CreateSession(%s): %v", sess.ID, err)
		}
	}
	// there says whether both replicas find the session.
	there := func(id string) bool {
		t.Helper()
		var found [2]bool
		for i, s := range []identity.SessionStore{a, b} {
			got, err := s.Session(ctx, id)
			switch {
			case errors.Is(err, identity.ErrNoSession):
			case err != nil:
				t.Fatalf("Session(%s) on replica %d: %v", id, i+1, err)
			case got.ID != id:
				t.Fatalf("Session(%s) on replica %d returned session %s", id, i+1, got.ID)
			default:
				found[i] = true
			}
		}
		if found[0] != found[1] {
			t.Fatalf("Session(%s): replica 1 finds it %v, replica 2 %v", id, found[0], found[1])
		}
		return found[0]
	}
	mustCreateSession(session("alice-laptop", "alice"))
	mustCreateSession(session("alice-phone", "alice"))
	mustCreateSession(session("bob-laptop", "bob"))

	got, err := b.Session(ctx, "alice-laptop")
	if err != nil {
		t.Fatal(err)
	}
	if want := session("alice-laptop", "alice"); got.Holder != want.Holder || !got.CreatedAt.Equal(want.CreatedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("Session = %+v, want %+v", got, want)
	}
	if _, err := a.Session(ctx, "never"); !errors.Is(err, identity.ErrNoSession) {
		t.Errorf("Session(never) = %v, want ErrNoSession", err)
	}

	// Signing out on one replica ends that session alone, on both;
	// ending it again is no error.
	if err := b.EndSession(ctx, "alice-laptop"); err != nil {
		t.Fatal(err)
	}
	if there("alice-laptop") || !there("alice-phone") || !there("bob-laptop") {
		t.Error("EndSession did not end that session alone")
	}
	if err := a.EndSession(ctx, "alice-laptop"); err != nil {
		t.Errorf("EndSession of an ended session: %v", err)
	}

	// Signing out everywhere ends every session of the holder, and no
	// one else's.
	mustCreateSession(session("alice-tablet", "alice"))
	n, err := b.EndSessionsOf(ctx, "alice")
	if err != nil || n != 2 {
		t.Errorf("EndSessionsOf(alice) = %d, %v; want 2", n, err)
	}
	if there("alice-phone") || there("alice-tablet") || !there("bob-laptop") {
		t.Error("EndSessionsOf did not end every session of alice alone")
	}
	if n, err := a.EndSessionsOf(ctx, "carol"); err != nil || n != 0 {
		t.Errorf("EndSessionsOf(carol) = %d, %v; want 0", n, err)
	}

	// An expired session is not there.
	expired := identity.Session{ID: "old", Holder: "bob", CreatedAt: now.Add(-13 * time.Hour), ExpiresAt: now.Add(-time.Hour)}
	mustCreateSession(expired)
	if there("old") {
		t.Error("an expired session is there")
	}
	mustCreateSession(session("bob-phone", "bob"))
	if !there("bob-phone") || !there("bob-laptop") {
		t.Error("a new session, or an old one that has not expired, is missing")
	}

	for _, bad := range []identity.Session{
		{Holder: "alice", CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		{ID: "x", CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		{ID: "y", Holder: "alice", CreatedAt: now, ExpiresAt: now},
	} {
		if err := a.CreateSession(ctx, bad); !errors.Is(err, identity.ErrSessionInvalid) {
			t.Errorf("CreateSession(%+v) = %v, want ErrSessionInvalid", bad, err)
		}
	}
}
