package ui

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/client"
)

type signinView struct {
	Next, CSRF, Error string
	// Notice says what the last sign-out did.
	Notice string
}

// signinPage asks for a token. It makes a session without a user, whose
// CSRF token the form carries.
func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	sess, err := c.session(r)
	if err != nil {
		c.sessionsDown(w, r, err)
		return
	}
	if sess.signedIn() {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	if sess == nil {
		sess = &session{CSRF: randomToken(), Expires: c.opts.Now().Add(c.opts.SessionTTL).Unix()}
		c.setSession(w, r, sess)
	}
	c.render(w, http.StatusOK, "signin", view{Title: "Sign in", Data: signinView{Next: safeNext(r.URL.Query().Get("next")), CSRF: sess.CSRF,
		Notice: signedOutNotice(r.URL.Query().Get("ended"))}})
}

// signedOutNotice says how many sessions a sign-out everywhere ended.
func signedOutNotice(ended string) string {
	n, err := strconv.Atoi(ended)
	switch {
	case err != nil || n < 0:
		return ""
	case n == 1:
		return "You are signed out of your one session."
	}
	return fmt.Sprintf("You are signed out of all %d of your sessions, in every browser.", n)
}

// signin checks the token with the API (GET /v1/whoami) and, when it is
// one, seals it into a new session.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	sess, err := c.session(r)
	if err != nil {
		c.sessionsDown(w, r, err)
		return
	}
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
	signed := c.signedInSession(token, me)
	if c.tooLong(signed) {
		// The name the token maps to tipped it over: the same words.
		c.render(w, http.StatusUnprocessableEntity, "signin", view{Title: "Sign in", Data: signinView{Next: next, CSRF: sess.CSRF, Error: tooLongMessage(token)}})
		return
	}
	if err := c.record(r.Context(), signed); err != nil {
		c.sessionsDown(w, r, err)
		return
	}
	if sess.ID != "" {
		// Signed in again over a session: that one ends.
		if err := c.opts.Sessions.EndSession(r.Context(), sess.ID); err != nil {
			c.log.WarnContext(r.Context(), "console: ending the session signed in over", slog.String("user", sess.Name), slog.Any("error", err))
		}
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

// signout ends the session, or with scope=everywhere every session of
// its user, in every browser: their records go, so their cookies, and
// any copy of them, are refused from then on by every replica.
func (c *Console) signout(x *call) error {
	to := Prefix + "signin"
	switch {
	case x.sess.ID == "":
		// A session of a server without tokens: nothing to end but the
		// cookie.
	case x.r.PostFormValue("scope") == "everywhere":
		n, err := c.opts.Sessions.EndSessionsOf(x.r.Context(), x.sess.Name)
		if err != nil {
			return fmt.Errorf("%w: %w", errSessions, err)
		}
		c.log.InfoContext(x.r.Context(), "console: signed out everywhere", slog.String("user", x.sess.Name), slog.Int("sessions", n))
		to += "?ended=" + strconv.Itoa(n)
	default:
		if err := c.opts.Sessions.EndSession(x.r.Context(), x.sess.ID); err != nil {
			return fmt.Errorf("%w: %w", errSessions, err)
		}
	}
	clearSession(x.w, x.r)
	http.Redirect(x.w, x.r, to, http.StatusSeeOther)
	return nil
}
