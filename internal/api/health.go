package api

import (
	"context"
	"errors"
	"net/http"
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
// check is named, its cause is logged, not returned.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	checks := map[string]string{}
	ready := true
	fail := func(name string, err error) {
		ready = false
		checks[name] = "failing"
		s.log.WarnContext(ctx, "readiness check failed", "check", name, "request_id", requestID(r), "error", err)
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
	status, code := "ok", http.StatusOK
	if !ready {
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	// The status is open to orchestrators' probes, which carry no token
	// (a kubelet's, a load balancer's); which check fails is for callers
	// who may read.
	if _, err := s.auth.authenticate(r); err != nil {
		checks = nil
	}
	writeJSON(w, code, wire.Health{Status: status, Checks: checks})
	return nil
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
