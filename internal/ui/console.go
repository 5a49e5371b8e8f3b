package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/identity"
)

// Prefix is where the console is served.
const Prefix = "/ui/"

// Options configure a Console.
type Options struct {
	// API is the API's handler. The console calls it in the process for
	// everything it reads and writes, with the signed-in user's token.
	API http.Handler
	// SessionKey seals session cookies: 32 bytes, the same on every
	// replica (the install key "console-session" of tenant.KeyStore).
	SessionKey []byte
	// Sessions records the sessions of signed-in users, in the database
	// every replica shares, so that signing out ends a session on all of
	// them, and a copy of its cookie with it. Required: without it a
	// copied cookie would stay valid after its user signed out.
	Sessions identity.SessionStore
	// Changes, if set, announces the ids of tenants that changed
	// (tenant.ChangeFeed), for the pages' live updates; "" means some were
	// lost.
	Changes func(ctx context.Context) (<-chan string, error)
	// SessionTTL is how long a sign-in lasts; default 12 hours.
	SessionTTL time.Duration
	// Logger receives what goes wrong; nil discards it.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Console is the web console: server-rendered pages over the API.
type Console struct {
	opts    Options
	sealer  *sealer
	log     *slog.Logger
	pages   *pages
	handler http.Handler
	live    *hub
	// fed says the store announces changes: pages are live.
	fed bool
	mu  sync.Mutex
	// providers are the enabled providers' names, once read.
	providers []string
	// schemas are providers' schemas as the form reads them (schema).
	schemas map[string]*node
	// ctx ends when the console closes, ending live streams.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a Console.
func New(opts Options) (*Console, error) {
	if opts.API == nil {
		return nil, errors.New("ui: a console needs the API's handler")
	}
	if opts.Sessions == nil {
		return nil, errors.New("ui: a console needs a session store (Options.Sessions), so that signing out ends a session everywhere")
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sealer, err := newSealer(opts.SessionKey)
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{opts: opts, sealer: sealer, log: opts.Logger, pages: pages, fed: opts.Changes != nil}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.live = newHub()
	if opts.Changes != nil {
		ch, err := opts.Changes(c.ctx)
		if err != nil {
			c.cancel()
			return nil, fmt.Errorf("ui: live updates: %w", err)
		}
		c.wg.Go(func() { c.live.run(ch) })
	}
	mux := http.NewServeMux()
	for pattern, h := range c.routes() {
		mux.Handle(pattern, h)
	}
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.renderError(w, r, nil, http.StatusForbidden, "This form was sent from another site, so it was refused.")
	}))
	c.handler = securityHeaders(csrf.Handler(mux))
	return c, nil
}

// ServeHTTP serves the console's pages under Prefix.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) { c.handler.ServeHTTP(w, r) }

// Close ends the live streams, so that a server shutting down does not
// wait for them.
func (c *Console) Close() {
	c.cancel()
	c.live.close()
	c.wg.Wait()
}

// contentSecurityPolicy allows the console's own scripts, styles and
// images, and nothing inline.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// call is one request to a page: its session and the client that calls
// the API as its user.
type call struct {
	w    http.ResponseWriter
	r    *http.Request
	sess *session
	api  *client.Client
}

// canWrite says the user may change tenants; pages hide write controls
// from the others (and the API refuses them anyway).
func (x *call) canWrite() bool { return x.sess.Role == "admin" }

type handler func(x *call) error

// page serves a handler to a signed-in user: without a session, one is
// made at once for a server without tokens (the API answers whoami without
// one), else the user is sent to sign in. Forms must carry the session's
// CSRF token.
func (c *Console) page(h handler) http.Handler { return c.serve(h, c.toSignIn) }

// stream serves a live stream like a page, but tells a browser without a
// session so in the stream, which cannot follow a redirect.
func (c *Console) stream(h handler) http.Handler {
	return c.serve(h, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, signedOut)
	})
}

// serve serves h to a signed-in user, and signedOut to anyone else.
func (c *Console) serve(h handler, signedOut http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				status := http.StatusBadRequest
				if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
					status = http.StatusRequestEntityTooLarge
				}
				sess, _ := c.session(r)
				c.renderError(w, r, sess, status, "This form could not be read: "+err.Error())
				return
			}
		}
		sess, err := c.session(r)
		if err != nil {
			c.sessionsDown(w, r, err)
			return
		}
		if !sess.signedIn() {
			me, err := c.apiAs("", w.Header().Get("X-Request-ID")).WhoAmI(r.Context())
			if err != nil {
				signedOut(w, r)
				return
			}
			sess = c.signedInSession("", me)
			c.setSession(w, r, sess)
		}
		x := &call{w: w, r: r, sess: sess, api: c.apiAs(sess.Token, w.Header().Get("X-Request-ID"))}
		if r.Method == http.MethodPost && !checkCSRF(r, sess) {
			c.renderError(w, r, sess, http.StatusForbidden, "This form has expired: go back, reload the page and send it again.")
			return
		}
		if err := h(x); err != nil {
			c.fail(x, err)
		}
	})
}

// maxFormBytes bounds a form: the editor's text and its other inputs.
const maxFormBytes = 2 << 20

// toSignIn sends the user to sign in, and back here afterwards.
func (c *Console) toSignIn(w http.ResponseWriter, r *http.Request) {
	next := ""
	if r.Method == http.MethodGet && r.URL.Path != Prefix+"signin" {
		next = "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	http.Redirect(w, r, Prefix+"signin"+next, http.StatusSeeOther)
}

// fail shows what went wrong: the API's problem as it said it, a sign-in
// for a token the API no longer takes.
func (c *Console) fail(x *call, err error) {
	var apiErr *client.Error
	switch {
	case errors.Is(err, errSessions):
		c.sessionsDown(x.w, x.r, err)
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized:
		clearSession(x.w, x.r)
		c.toSignIn(x.w, x.r)
	case errors.As(err, &apiErr):
		msg := apiErr.Problem.Detail
		if apiErr.Status == http.StatusForbidden {
			msg = "You are signed in as " + x.sess.Name + ", whose role (" + x.sess.Role + ") may only read. " + msg
		}
		c.renderError(x.w, x.r, x.sess, apiErr.Status, msg)
	case errors.Is(err, context.Canceled):
		// The user went away.
	default:
		c.log.ErrorContext(x.r.Context(), "console: request failed", slog.String("path", x.r.URL.Path),
			slog.String("request_id", x.w.Header().Get("X-Request-ID")), slog.Any("error", err))
		c.renderError(x.w, x.r, x.sess, http.StatusInternalServerError, "landlord could not show this page. Its log has the cause under request "+x.w.Header().Get("X-Request-ID")+".")
	}
}

// safeNext is where to go after signing in: a console page, never another
// site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Prefix
	}
	return next
}
