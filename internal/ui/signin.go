package ui

import (
	"errors"
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
	me, err := c.apiAs(token, w.Header().Get("X-Request-ID")).WhoAmI(r.Context())
	var apiErr *client.Error
	if err != nil {
		msg := "landlord could not check the token: " + err.Error()
		status := http.StatusInternalServerError
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized {
			msg, status = "That token is not one of landlord's. Check it and try again.", http.StatusUnauthorized
		}
		if token == "" {
			msg, status = "Enter your token.", http.StatusUnauthorized
		}
		c.render(w, status, "signin", view{Title: "Sign in", Data: signinView{Next: next, CSRF: sess.CSRF, Error: msg}})
		return
	}
	c.setSession(w, r, c.newSession(token, me))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signout ends the session.
func (c *Console) signout(x *call) error {
	clearSession(x.w, x.r)
	http.Redirect(x.w, x.r, Prefix+"signin", http.StatusSeeOther)
	return nil
}
