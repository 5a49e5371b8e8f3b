package ui

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/identity"
)

// A session is sealed into its cookie (AES-256-GCM under the install's
// console key, which every replica reads from the database), so that no
// replica keeps sessions in memory and a restart signs nobody out. It
// holds the bearer token the user signed in with: every call the console
// makes for them carries it, so the API's roles and audit apply as they
// would to the user's own calls, and removing the token from landlord's
// configuration ends its sessions at their next request.
//
// A session with a token also has an ID, recorded in the database
// (identity.SessionStore): its cookie is honoured only while the record
// is there, so that signing out, here or everywhere, ends it on every
// replica at once, and a copy of the cookie is worth nothing after.
type session struct {
	ID    string `json:"i,omitempty"`
	Token string `json:"t,omitempty"`
	Name  string `json:"n,omitempty"`
	Role  string `json:"r,omitempty"`
	// CSRF is the token every form of the session carries.
	CSRF    string `json:"c"`
	Expires int64  `json:"e"`
}

// signedIn says the session is of a caller the API knows.
func (s *session) signedIn() bool { return s != nil && s.Name != "" }

const sessionCookie = "landlord_session"

// sealer seals and opens session cookies.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (*sealer, error) {
	if len(key) != 32 {
		return nil, errors.New("ui: the session key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

// sessionAD binds the sealed text to its purpose.
var sessionAD = []byte("landlord console session v1")

func (s *sealer) seal(sess *session) string {
	plain, _ := json.Marshal(sess)
	return s.sealBytes(sessionAD, plain)
}

// sealBytes seals plain for the purpose ad names.
func (s *sealer) sealBytes(ad, plain []byte) string {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, ad))
}

// openBytes opens what sealBytes sealed for ad; false for anything else.
func (s *sealer) openBytes(ad []byte, value string) ([]byte, bool) {
	b, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(b) < s.aead.NonceSize() {
		return nil, false
	}
	plain, err := s.aead.Open(nil, b[:s.aead.NonceSize()], b[s.aead.NonceSize():], ad)
	return plain, err == nil
}

// open returns the session of a cookie value, or nil when it is not one
// sealed with this key or has expired.
func (s *sealer) open(value string, now time.Time) *session {
	plain, ok := s.openBytes(sessionAD, value)
	if !ok {
		return nil
	}
	var sess session
	if json.Unmarshal(plain, &sess) != nil || now.Unix() >= sess.Expires || sess.CSRF == "" {
		return nil
	}
	return &sess
}

func randomToken() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// setSession writes the session's cookie: HttpOnly, SameSite=Strict, under
// /ui/ only, Secure when the console is served over HTTPS.
func (c *Console) setSession(w http.ResponseWriter, r *http.Request, sess *session) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: c.sealer.seal(sess), Path: "/ui/",
		HttpOnly: true, Secure: overHTTPS(r), SameSite: http.SameSiteStrictMode, Expires: time.Unix(sess.Expires, 0)})
}

func clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/ui/", MaxAge: -1,
		HttpOnly: true, Secure: overHTTPS(r), SameSite: http.SameSiteStrictMode})
}

// overHTTPS reports whether the browser reached the console over HTTPS:
// landlord's own TLS, or a TLS-terminating proxy's. The proxy's
// X-Forwarded-Proto is believed from anyone here: at worst a lying client
// gets a Secure cookie its browser will not send over plain HTTP.
func overHTTPS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")
}

// session returns the request's session, nil when it has none or its
// record is gone (it was signed out of). The error wraps errSessions when
// the records cannot be read.
func (c *Console) session(r *http.Request) (*session, error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, nil
	}
	sess := c.sealer.open(ck.Value, c.opts.Now())
	if sess == nil || sess.Token == "" {
		// None, one before sign-in, or one of a server without
		// tokens, which anyone gets for the asking: nothing to end.
		return sess, nil
	}
	if sess.ID == "" {
		return nil, nil // sealed before sessions were recorded: sign in again
	}
	return c.recorded(r.Context(), sess)
}

// recorded returns sess when its record is there, nil when it is not.
func (c *Console) recorded(ctx context.Context, sess *session) (*session, error) {
	rec, err := c.opts.Sessions.Session(ctx, sess.ID)
	switch {
	case errors.Is(err, identity.ErrNoSession):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%w: %w", errSessions, err)
	case rec.Holder != sess.Name:
		return nil, nil
	}
	return sess, nil
}

// errSessions marks a failure to read or write the sessions' records: the
// page answers 503, and nobody is signed out for it.
var errSessions = errors.New("ui: the console's sessions cannot be read or written now")

// signedInSession makes the session of a user the API knows as me, who
// signed in with token ("" on a server without tokens). It is recorded
// only by record.
func (c *Console) signedInSession(token string, me *client.Identity) *session {
	sess := &session{Token: token, Name: me.Name, Role: me.Role, CSRF: randomToken(), Expires: c.opts.Now().Add(c.opts.SessionTTL).Unix()}
	if token != "" {
		sess.ID = randomToken()
	}
	return sess
}

// record records a session with a token, so that its cookie is honoured.
func (c *Console) record(ctx context.Context, sess *session) error {
	if sess.ID == "" {
		return nil
	}
	now := c.opts.Now()
	err := c.opts.Sessions.CreateSession(ctx, identity.Session{ID: sess.ID, Holder: sess.Name, CreatedAt: now, ExpiresAt: time.Unix(sess.Expires, 0)})
	if err != nil {
		return fmt.Errorf("%w: %w", errSessions, err)
	}
	return nil
}

// sessionsDown answers a request whose session could not be checked.
func (c *Console) sessionsDown(w http.ResponseWriter, r *http.Request, err error) {
	c.log.ErrorContext(r.Context(), "console: the sessions cannot be read or written", slog.String("path", r.URL.Path),
		slog.String("request_id", w.Header().Get("X-Request-ID")), slog.Any("error", err))
	w.Header().Set("Retry-After", "5")
	c.renderError(w, r, nil, http.StatusServiceUnavailable, "landlord cannot reach its database to check your session now. Try again in a moment.")
}

// checkCSRF says whether a form carries its session's CSRF token.
func checkCSRF(r *http.Request, sess *session) bool {
	got := r.PostFormValue("csrf")
	return sess != nil && got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRF)) == 1
}
