package ui

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// A session is sealed into its cookie (AES-256-GCM under the install's
// console key, which every replica reads from the database), so that no
// replica keeps sessions in memory and a restart signs nobody out. It
// holds the bearer token the user signed in with: every call the console
// makes for them carries it, so the API's roles and audit apply as they
// would to the user's own calls, and removing the token from landlord's
// configuration ends its sessions at their next request.
type session struct {
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

// session returns the request's session, nil when it has none.
func (c *Console) session(r *http.Request) *session {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	return c.sealer.open(ck.Value, c.opts.Now())
}

// checkCSRF says whether a form carries its session's CSRF token.
func checkCSRF(r *http.Request, sess *session) bool {
	got := r.PostFormValue("csrf")
	return sess != nil && got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRF)) == 1
}
