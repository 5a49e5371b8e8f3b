package ui

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/jaxxstorm/landlord/client"
)

type signinView struct {
	Next, CSRF, Error string
}

// signinPage asks for a token. It makes a session without a user, whose
// CSRF token the form carries.
func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	sess := c.session(r)
	if sess.signedIn() {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	if sess == nil {
		sess = &session{CSRF: randomToken(), Expires: c.opts.Now().Add(c.opts.SessionTTL).Unix()}
		c.setSession(w, r, sess)
	}
	c.render(w, http.StatusOK, "signin", view{Title: "Sign in", Data: signinView{Next: safeNext(r.URL.Query().Get("next")), CSRF: sess.CSRF}})
}

// signin checks the token with the API (GET /v1/whoami) and, when it is
// one, seals it into a new session.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	sess := c.session(r)
	next := safeNext(r.PostFormValue("next"))
	if !checkCSRF(r, sess) {
		c.renderError(w, r, nil, http.StatusForbidden, "This form has expired: reload the sign-in page and send it again.")
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	// A token too long for the cookie is refused before the API checks
	// it, so that the refusal says nothing of whether it is valid.
	if c.tooLong(&session{Token: token, CSRF: randomToken(), Expires: c.opts.Now().Unix()}) {
		c.render(w, http.StatusUnprocessableEntity, "signin", view{Title: "Sign in", Data: signinView{Next: next, CSRF: sess.CSRF, Error: tooLongMessage(token)}})
		return
	}
	me, err := c.apiAs(token, w.Header().Get("X-Request-ID")).WhoAmI(r.Context())
	if err != nil {
		status, msg := signinRefusal(token, err)
		c.render(w, status, "signin", view{Title: "Sign in", Data: signinView{Next: next, CSRF: sess.CSRF, Error: msg}})
		return
	}
	signed := c.newSession(token, me)
	if c.tooLong(signed) {
		// The name the token maps to tipped it over: the same words.
		c.render(w, http.StatusUnprocessableEntity, "signin", view{Title: "Sign in", Data: signinView{Next: next, CSRF: sess.CSRF, Error: tooLongMessage(token)}})
		return
	}
	c.setSession(w, r, signed)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// maxCookieBytes is the most of a cookie's name and value that every
// browser keeps.
const maxCookieBytes = 4000

// tooLong says sess does not fit in the session cookie.
func (c *Console) tooLong(sess *session) bool {
	return len(sessionCookie)+len(c.sealer.seal(sess)) > maxCookieBytes
}

// tooLongMessage refuses a token too long for the session cookie. It does
// not say whether the token is valid: it was not asked.
func tooLongMessage(token string) string {
	return fmt.Sprintf("At %d bytes this token is too long for the console's session cookie, which browsers keep to 4 KB. "+
		"Ask your identity provider for a shorter token (fewer groups in it), or use the CLI.", len(token))
}

// signinRefusal is the status and message of a sign-in whose token the
// API did not take.
func signinRefusal(token string, err error) (int, string) {
	var apiErr *client.Error
	isAPI := errors.As(err, &apiErr)
	switch {
	case token == "":
		return http.StatusUnauthorized, "Enter your token."
	case isAPI && apiErr.Status == http.StatusUnauthorized && strings.Count(token, ".") != 2:
		return http.StatusUnauthorized, "That token is not one of landlord's. Check it and try again."
	case isAPI && (apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusForbidden):
		// An identity provider's token: the API says what is wrong
		// with it (expired, for another audience, no role).
		return apiErr.Status, "landlord refused that token: " + apiErr.Problem.Detail + "."
	case isAPI && apiErr.Status == http.StatusServiceUnavailable:
		return http.StatusServiceUnavailable, "landlord cannot check that token now: " + apiErr.Problem.Detail + "."
	}
	return http.StatusInternalServerError, "landlord could not check the token: " + err.Error()
}

// signout ends the session.
func (c *Console) signout(x *call) error {
	clearSession(x.w, x.r)
	http.Redirect(x.w, x.r, Prefix+"signin", http.StatusSeeOther)
	return nil
}
