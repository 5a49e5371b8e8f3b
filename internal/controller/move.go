package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// reconcileMove works on the move of placement name of t (see
// tenant.Move): it provisions the target and waits until it runs and its
// endpoints answer, holds for an approval when the move asks for one,
// switches the placement to the target, and destroys what no longer
// serves: the source after the switch, the target of a cancelled move.
// Each step is a write of its own, fenced like every other, so that a
// controller that dies between two of them is followed by one that goes
// on from the step recorded.
func (c *Controller) reconcileMove(ctx context.Context, t *tenant.Tenant, name string, epoch int64, log *slog.Logger) (Result, error) {
	v, err := t.OtherView(name)
	if err != nil {
		return Result{}, nil // the move ended meanwhile
	}
	m := t.Placement(name).Move
	r := &reconcile{c: c, t: v, full: t, tenantID: t.ID, tenantName: t.Name, placement: name, other: true, epoch: epoch,
		log: log.With(slog.String("move", m.ID), slog.String("workload_id", v.ID), slog.String("move_step", string(m.Step)))}
	res, err := r.run(ctx)
	if err == nil && r.t.Status == tenant.StatusDeleted && t.DeletionRequestedAt != nil {
		// The move ended with the tenant's deletion: the placement's own
		// workload is destroyed next, at once.
		return Result{Requeue: true}, nil
	}
	if err != nil || res.Requeue || r.t.Status != tenant.StatusReady || r.t.ObservedGeneration != r.t.Generation || r.t.DeletionRequestedAt != nil {
		return res, err
	}
	m = r.full.Placement(name).Move
	if m == nil || (m.Step != tenant.MoveProvisioning && m.Step != tenant.MoveAwaitingApproval) {
		return res, nil
	}
	// The target runs its generation: it switches once its endpoints
	// answer (and an approval came, if the move holds for one).
	if err := c.probe(ctx, r.t.Endpoints); err != nil {
		since := c.opts.Now().Sub(r.t.StatusChangedAt)
		if since > c.opts.ProgressDeadline {
			msg := fmt.Sprintf("the move's target runs, but its endpoints did not answer within %s: %v; cancel the move (landlord move %s --cancel), fix the cause and move again",
				c.opts.ProgressDeadline, err, t.Name)
			r.log.Error("move target does not answer", slog.Any("error", err))
			return Result{}, r.observe(ctx, tenant.Observation{Status: tenant.StatusFailed, Settles: true, Message: msg, Attempts: r.t.Attempts})
		}
		msg := "the move's target runs; waiting for its endpoints to answer: " + err.Error()
		if msg != r.t.StatusMessage {
			if err := r.observe(ctx, r.keep(tenant.StatusReady, msg)); err != nil {
				return Result{}, err
			}
		}
		return Result{RequeueAfter: c.opts.PollInterval}, nil
	}
	obs := r.keep(tenant.StatusReady, "")
	switch {
	case m.Hold && !m.Approved && m.Step == tenant.MoveAwaitingApproval:
		return res, nil // an approval wakes the tenant
	case m.Hold && !m.Approved:
		obs.MoveStep, obs.Message = tenant.MoveAwaitingApproval, "runs and answers; the move holds for an approval"
		r.log.Info("move target runs and answers; holding for an approval")
	default:
		obs.MoveStep = tenant.MoveDestroyingSource
		r.log.Info("move target runs and answers; switching the placement to it", slog.String("to", m.To))
	}
	if err := r.observe(ctx, obs); err != nil {
		return Result{}, err
	}
	// The next pass destroys the source.
	return Result{Requeue: obs.MoveStep == tenant.MoveDestroyingSource}, nil
}

// probeTimeout bounds one endpoint probe.
const probeTimeout = 3 * time.Second

// probe checks every endpoint in eps with the configured probe; the first
// that does not answer is the error.
func (c *Controller) probe(ctx context.Context, eps []provider.Endpoint) error {
	for _, e := range eps {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := c.opts.Probe(ctx, e)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", e.Address, err)
		}
	}
	return nil
}

// ErrNoAnswer is an endpoint that did not accept a connection.
var ErrNoAnswer = errors.New("the endpoint does not answer")

// ProbeEndpoint checks that a TCP endpoint accepts a connection. These
// pass without a probe: an endpoint whose address is a URL (a provider
// that runs nothing, such as the mock's mock://); a UDP one, which has no
// connection to accept; and one whose host name does not resolve where
// landlord runs (a Kubernetes Service's cluster DNS name, seen from
// outside the cluster), which landlord cannot reach to check and which
// its provider's readiness vouches for.
func ProbeEndpoint(ctx context.Context, e provider.Endpoint) error {
	if strings.Contains(e.Address, "://") || (e.Protocol != "" && e.Protocol != workload.ProtocolTCP) {
		return nil
	}
	if host, _, err := net.SplitHostPort(e.Address); err == nil && net.ParseIP(host) == nil {
		var dnsErr *net.DNSError
		if _, err := net.DefaultResolver.LookupHost(ctx, host); errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil
		}
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", e.Address)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoAnswer, err)
	}
	defer conn.Close()
	// A forwarder (Docker's docker-proxy, a load balancer) accepts the
	// connection whether or not the workload behind it listens, and then
	// closes it at once when nothing does. A workload that listens holds
	// the connection open, waiting for the client to speak (or speaks
	// first): either passes.
	if err := conn.SetReadDeadline(time.Now().Add(probeHold)); err != nil {
		return err
	}
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		var nerr net.Error
		if errors.As(err, &nerr) && nerr.Timeout() {
			return nil
		}
		return fmt.Errorf("%w: the connection was accepted and closed at once (%w): a forwarder with nothing behind it", ErrNoAnswer, err)
	}
	return nil
}

// probeHold is how long a probe's connection must stay open, unless the
// workload speaks first, to count as answered.
const probeHold = 300 * time.Millisecond
