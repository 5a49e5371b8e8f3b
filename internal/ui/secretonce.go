package ui

import (
	"encoding/json"
	"net/http"
	"time"
)

// A subscription's signing secret is made by the console
// (client.NewSecret), sent to the API once and never read back: the API
// shows a secret's dates only. The page that follows the form shows it
// once. The form's answer is a redirect, so that reloading sends nothing
// again, with the secret in a cookie sealed under the console's key,
// HttpOnly, SameSite=Strict, under /ui/subscriptions/ only and for two
// minutes, bound to the session and to the subscription; the
// subscription's page shows it and clears the cookie, so that a reload,
// the back button or another tab shows it no more.

const (
	secretCookie = "landlord_new_secret"
	secretPath   = Prefix + "subscriptions/"
	// secretShownFor is how long the cookie waits for its page.
	secretShownFor = 2 * time.Minute
)

// secretAD binds the sealed cookie to its purpose.
var secretAD = []byte("landlord console new webhook secret v1")

// shownSecret is what the cookie holds.
type shownSecret struct {
	// Subscription is the subscription's id; Session the CSRF token of
	// the session that made it, which no other session has.
	Subscription string `json:"s"`
	Session      string `json:"c"`
	Secret       string `json:"v"`
	// Rotated says it replaced another secret rather than came with a
	// new subscription.
	Rotated bool  `json:"r,omitempty"`
	Expires int64 `json:"e"`
}

// showSecretOnce has the next page of subscription show secret.
func (c *Console) showSecretOnce(x *call, subscription, secret string, rotated bool) {
	plain, _ := json.Marshal(shownSecret{Subscription: subscription, Session: x.sess.CSRF, Secret: secret, Rotated: rotated,
		Expires: c.opts.Now().Add(secretShownFor).Unix()})
	http.SetCookie(x.w, &http.Cookie{Name: secretCookie, Value: c.sealer.sealBytes(secretAD, plain), Path: secretPath,
		MaxAge: int(secretShownFor / time.Second), HttpOnly: true, Secure: overHTTPS(x.r), SameSite: http.SameSiteStrictMode})
}

// takeSecret returns the secret to show on the page of subscription, if
// one waits for it, and clears it; nil when none does.
func (c *Console) takeSecret(x *call, subscription string) *shownSecret {
	ck, err := x.r.Cookie(secretCookie)
	if err != nil {
		return nil
	}
	plain, ok := c.sealer.openBytes(secretAD, ck.Value)
	var s shownSecret
	ok = ok && json.Unmarshal(plain, &s) == nil
	if ok && s.Subscription != subscription {
		return nil // another subscription's: left for its page
	}
	http.SetCookie(x.w, &http.Cookie{Name: secretCookie, Value: "", Path: secretPath, MaxAge: -1,
		HttpOnly: true, Secure: overHTTPS(x.r), SameSite: http.SameSiteStrictMode})
	if !ok || s.Session != x.sess.CSRF || c.opts.Now().Unix() >= s.Expires {
		return nil
	}
	return &s
}
