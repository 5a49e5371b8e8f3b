package api

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, wire.Identity{Name: actor(r), Role: string(info(r).role)})
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, wire.Health{Status: "ok"})
	return nil
}

// readyz checks the database, the providers and the extra checks; a failed
// check is named, its cause is logged, not returned. A caller without
// credentials (a kubelet's probe, a load balancer's) gets the status alone,
// from a run at most anonReadyTTL old: the checks call the database and
// every provider, which anyone who reaches the port must not be able to
// make landlord do at will.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.auth.authenticate(r); err != nil {
		ready := s.anonReady.get(func() bool {
			// Its result serves other callers: the first one leaving must
			// not cut it short.
			ready, _ := s.checkReady(context.WithoutCancel(r.Context()), requestID(r))
			return ready
		})
		writeJSON(w, readyCode(ready), wire.Health{Status: readyStatus(ready)})
		return nil
	}
	ready, checks := s.checkReady(r.Context(), requestID(r))
	writeJSON(w, readyCode(ready), wire.Health{Status: readyStatus(ready), Checks: checks})
	return nil
}

// checkReady runs every readiness check, logging the cause of each that
// fails under the request's id.
func (s *Server) checkReady(ctx context.Context, reqID string) (bool, map[string]string) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	checks := map[string]string{}
	ready := true
	fail := func(name string, err error) {
		ready = false
		checks[name] = "failing"
		s.log.WarnContext(ctx, "readiness check failed", "check", name, "request_id", reqID, "error", err)
	}
	if _, err := s.store.List(ctx, tenant.ListOptions{PageSize: 1}); err != nil {
		fail("database", err)
	} else {
		checks["database"] = "ok"
	}
	if s.writesFailing.Load() {
		// A write failed for want of the database (a full disk): ready
		// again once a write goes through.
		if err := s.probeWrite(ctx); err != nil {
			fail("database writes", err)
		} else {
			s.writesFailing.Store(false)
			checks["database writes"] = "ok"
		}
	}
	for _, p := range s.compute.Registry().List() {
		if healthy, msg := providerHealth(ctx, p); !healthy {
			fail("provider:"+p.Name(), errors.New(msg))
		} else {
			checks["provider:"+p.Name()] = "ok"
		}
	}
	for name, check := range s.opts.Ready {
		if err := check(ctx); err != nil {
			fail(name, err)
		} else {
			checks[name] = "ok"
		}
	}
	return ready, checks
}

func readyCode(ready bool) int {
	if ready {
		return http.StatusOK
	}
	return http.StatusServiceUnavailable
}

func readyStatus(ready bool) string {
	if ready {
		return "ok"
	}
	return "unavailable"
}

// anonReadyTTL is how long a readiness run answers callers without
// credentials: a kubelet probes every few seconds, so it sees each run.
const anonReadyTTL = time.Second

// readyCache is the last readiness run for callers without credentials;
// one run at a time, the others wait for it and take its result.
type readyCache struct {
	mu    sync.Mutex
	at    time.Time
	ready bool
}

func (c *readyCache) get(run func() bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < anonReadyTTL {
		return c.ready
	}
	c.ready = run()
	c.at = time.Now()
	return c.ready
}

// metrics serves the Prometheus metrics, when the server has them.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) error {
	if s.opts.Metrics == nil {
		return problem(http.StatusNotFound, wire.CodeNotFound, "metrics are not enabled on this server")
	}
	s.opts.Metrics.ServeHTTP(w, r)
	return nil
}

// metricsBody is the body of GET /metrics.
type metricsBody struct{}

func (metricsBody) openAPIContent() openapi3.Content {
	return openapi3.Content{"text/plain": openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())}
}

// probeLease is the lease /readyz writes to learn whether the database
// takes writes again.
const probeLease = "readyz-probe"

// probeWrite makes one small write: the probe lease, taken for a second.
func (s *Server) probeWrite(ctx context.Context) error {
	leases, ok := s.store.(tenant.LeaseStore)
	if !ok {
		return nil // nothing to write with: the next request tells
	}
	_, err := leases.AcquireLease(ctx, probeLease, probeLease, time.Second)
	if errors.Is(err, tenant.ErrLeaseHeld) {
		return nil // written by another replica's probe: writes go through
	}
	return err
}
