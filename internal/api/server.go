package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/jaxxstorm/landlord/internal/events"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Compute is what the API, and the use cases it calls, need of
// compute.Manager.
type Compute interface {
	service.Compute
	RedactConfig(provider string, config json.RawMessage) (json.RawMessage, error)
	GetTenantStatus(ctx context.Context, t provider.TenantRef) (*provider.ComputeStatus, error)
}

var _ Compute = (*compute.Manager)(nil)

// Options configure a Server.
type Options struct {
	Store   tenant.Store
	Compute Compute
	// Fleet stores plans and rollouts (usually the same database as Store).
	// Without it the /v1/plans and /v1/rollouts routes, and a tenant
	// change that names a plan, answer 501 fleet_unavailable.
	Fleet fleet.Store
	// Tokens are the bearer tokens accepted; none means every request is
	// the anonymous admin (serve on loopback only; see CheckListen).
	Tokens []Token
	// Verifier, if set, checks the bearer tokens that are none of Tokens:
	// an identity provider's JWTs.
	Verifier identity.TokenVerifier
	// Hosts are names, besides localhost and loopback addresses, that a
	// server without credentials answers on loopback (the Host header of a
	// request; see refuseForeignHosts): names of this machine's loopback in
	// /etc/hosts, say. None by default.
	Hosts []string
	// MaxBodyBytes bounds request bodies; default 1 MiB.
	MaxBodyBytes int64
	// IdempotencyLease is how long a create's reservation of its
	// Idempotency-Key keeps retries waiting (409 idempotency_in_progress)
	// before one takes it over: the wait of a client whose landlord died
	// with its request. tenant.MinIdempotencyLease to
	// tenant.MaxIdempotencyLease; 0 means tenant.IdempotencyLease.
	IdempotencyLease time.Duration
	// Ready adds readiness checks to /readyz (the controller's leader, say):
	// each returns nil when ready.
	Ready map[string]func(context.Context) error
	// Logger receives one line per request; nil discards them.
	Logger *slog.Logger
	// Observer, if set, is told of every request (for metrics).
	Observer HTTPObserver
	// Metrics, if set, serves GET /metrics.
	Metrics http.Handler
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Events keeps the outbox and the webhook subscriptions; without it
	// (or EventEncoder) /v1/events and /v1/subscriptions answer 501.
	Events events.Store
	// EventEncoder writes events as CloudEvents; its Tenant is set by New
	// to the API's view of a tenant when nil.
	EventEncoder *events.Encoder
	// EventKeys seal subscriptions' secrets; EventGuard checks their URLs.
	EventKeys  events.Keyring
	EventGuard *events.Guard
	// Changes wakes event streams at once when tenants change.
	Changes tenant.ChangeFeed
}

// HTTPObserver records requests (for metrics).
type HTTPObserver interface {
	// ObserveHTTP records one request by route pattern ("" when no route
	// matched), method and status.
	ObserveHTTP(route, method string, code int, d time.Duration)
}

// Server serves API v1.
type Server struct {
	store   tenant.Store
	fleet   fleet.Store
	idem    tenant.IdempotencyStore
	svc     *service.Service
	compute Compute
	auth    *authenticator
	opts    Options
	log     *slog.Logger
	handler http.Handler
	// writesFailing is set when a request failed because the database
	// could not take it (tenant.ErrUnavailable): /readyz then tries a
	// write, and clears it once one succeeds.
	writesFailing atomic.Bool
	// anonReady is the readiness answered to callers without
	// credentials (readyz).
	anonReady readyCache
}

// New returns a Server.
func New(opts Options) (*Server, error) {
	if opts.Store == nil || opts.Compute == nil {
		return nil, fmt.Errorf("api: a server needs a store and compute")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IdempotencyLease == 0 {
		opts.IdempotencyLease = tenant.IdempotencyLease
	}
	if err := tenant.CheckIdempotencyLease(opts.IdempotencyLease); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	svc, err := service.New(service.Options{Tenants: opts.Store, Fleet: opts.Fleet, Compute: opts.Compute, Now: opts.Now})
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	idem, ok := opts.Store.(tenant.IdempotencyStore)
	if !ok {
		return nil, fmt.Errorf("api: the store %T cannot keep idempotent responses", opts.Store)
	}
	auth, err := newAuthenticator(opts.Tokens, opts.Verifier)
	if err != nil {
		return nil, err
	}
	s := &Server{store: opts.Store, fleet: opts.Fleet, idem: idem, svc: svc, compute: opts.Compute, auth: auth, opts: opts, log: opts.Logger}
	if s.opts.Events == nil {
		s.opts.Events, _ = opts.Store.(events.Store) // the outbox, where the store keeps it
	}
	if s.opts.EventEncoder == nil {
		s.opts.EventEncoder = &events.Encoder{Source: "landlord"}
	}
	if s.opts.EventEncoder.Tenant == nil {
		s.opts.EventEncoder.Tenant = s.render
	}
	if s.opts.EventGuard == nil {
		s.opts.EventGuard = events.NewGuard(nil)
	}
	mux := http.NewServeMux()
	for pattern, rs := range groupRoutes(s.routes()) {
		mux.Handle(pattern, s.dispatch(rs))
	}
	mux.Handle(pprofPrefix, s.pprofHandler()) // not API v1: outside the route table
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeProblem(w, r, problem(http.StatusNotFound, wire.CodeNotFound, fmt.Sprintf("no route %s %s; see GET /v1/openapi.json", r.Method, r.URL.Path)))
	}))
	s.handler = s.withRequestID(s.withRecovery(s.refuseForeignHosts(s.refuseCrossSite(mux))))
	return s, nil
}

// Handler returns the API's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Wrap gives h what every API request has: a request id, one log line,
// metrics, a 500 for a panic and, on a server without credentials, the
// refusal of Host headers that do not name loopback; for handlers served
// beside the API (the web console, which refuses cross-site forms itself).
func (s *Server) Wrap(h http.Handler) http.Handler {
	return s.withRequestID(s.withRecovery(s.refuseForeignHosts(h)))
}

// HTTPServer returns an http.Server for h with timeouts that a slow or
// hostile client cannot exhaust.
func HTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

type ctxKey int

const (
	requestIDKey ctxKey = iota
	infoKey
)

// requestInfo is what a request's handlers learn that its log line reports:
// who called, and which tenant it was about.
type requestInfo struct {
	actor    string
	role     Role
	kind     string // how the actor proved who they are (identity.Kind*)
	tenantID string
}

func info(r *http.Request) *requestInfo {
	if i, ok := r.Context().Value(infoKey).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey).(string)
	return id
}

// actor is the name of the request's caller.
func actor(r *http.Request) string { return info(r).actor }

// noteTenant records which tenant the request is about, for its log line.
func noteTenant(r *http.Request, id string) { info(r).tenantID = id }

// withRequestID gives every request an id: the client's X-Request-ID when it
// sends a sane one, else a new one; it is returned and logged.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if len(id) == 0 || len(id) > 128 || !printable(id) {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-ID", id)
		ctx := context.WithValue(r.Context(), requestIDKey, id)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func printable(s string) bool {
	for _, c := range s {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// withRecovery logs every request and turns a panic into a 500.
func (s *Server) withRecovery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.opts.Now()
		rec := &statusRecorder{ResponseWriter: w}
		ri := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), infoKey, ri))
		defer func() {
			if p := recover(); p != nil {
				s.log.ErrorContext(r.Context(), "request panicked", slog.String("request_id", requestID(r)), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					s.writeProblem(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			elapsed := s.opts.Now().Sub(start)
			s.log.Log(r.Context(), requestLevel(r, rec.code()), "request",
				slog.String("request_id", requestID(r)),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", rec.code()),
				slog.Duration("duration", elapsed),
				slog.String("actor", ri.actor),
				slog.String("tenant_id", ri.tenantID))
			if s.opts.Observer != nil {
				route := r.Pattern
				if route == "/" {
					route = "" // the catch-all: no route matched
				}
				s.opts.Observer.ObserveHTTP(route, r.Method, rec.code(), elapsed)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// requestLevel is the level of a request's log line: debug for a health
// probe that passed, which load balancers and orchestrators send every few
// seconds; info for the others, and for a probe that failed.
func requestLevel(r *http.Request, status int) slog.Level {
	if (r.URL.Path == "/healthz" || r.URL.Path == "/readyz") && status < 300 {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// statusRecorder remembers the status a handler sent.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
