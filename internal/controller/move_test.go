package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// act applies a move action to the tenant as it is now.
func (e *env) act(t testing.TB, id string, a tenant.MoveAction) *tenant.Tenant {
	t.Helper()
	cur := e.get(t, id)
	out, err := e.store.UpdateDesired(ctx, id, tenant.DesiredChange{Version: cur.Version, Move: &a, Actor: "test"})
	if err != nil {
		t.Fatalf("%s: %v", a.Kind, err)
	}
	return out
}

// waitMove waits until the tenant's only placement's move is at step, or
// gone for "".
func (e *env) waitMove(t testing.TB, id string, step tenant.MoveStep) *tenant.Tenant {
	t.Helper()
	var got *tenant.Tenant
	poll.Until(t, fmt.Sprintf("move at %q", step), 30*time.Second, func() (bool, string) {
		got = e.get(t, id)
		m := got.Placements[0].Move
		switch {
		case m == nil:
			return step == "", "no move; tenant " + string(got.Status) + ": " + got.StatusMessage
		default:
			return m.Step == step, fmt.Sprintf("%s; target %s: %s", m.Step, m.Other.Status, m.Other.StatusMessage)
		}
	})
	return got
}

// TestMove: a plain tenant's placement moves make-before-break. Held for
// an approval, the source serves and the target runs beside it; approved,
// the placement switches to the target and the source is destroyed. A
// second move, cancelled, destroys its target and leaves the placement as
// it was. A target whose endpoints do not answer is not switched to.
func TestMove(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	var answering atomic.Bool
	opts.Probe = func(context.Context, provider.Endpoint) error {
		if !answering.Load() {
			return errors.New("connection refused")
		}
		return nil
	}
	e.run(t, opts)
	tn := e.create(t, "acme", appConfig, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)
	source := e.get(t, tn.ID)

	target := `{"image":"example.com/app:2","ports":[{"container_port":8080}]}`
	e.act(t, tn.ID, tenant.MoveAction{Kind: tenant.MoveStart, Provider: mock.Name, ComputeConfig: json.RawMessage(target), Hold: true})
	poll.Until(t, "the target running, waiting for its endpoints", 30*time.Second, func() (bool, string) {
		m := e.get(t, tn.ID).Placements[0].Move
		return m.Other.Status == tenant.StatusReady && strings.Contains(m.Other.StatusMessage, "waiting for its endpoints to answer"), m.Other.StatusMessage
	})
	if got := e.get(t, tn.ID); got.Placements[0].Move.Step != tenant.MoveProvisioning || got.Status != tenant.StatusUpdating {
		t.Errorf("a target that does not answer: step %s, tenant %s", got.Placements[0].Move.Step, got.Status)
	}
	answering.Store(true)
	held := e.waitMove(t, tn.ID, tenant.MoveAwaitingApproval)
	p := held.Placements[0]
	if p.WorkloadID != source.ID || p.Status != tenant.StatusReady || e.mock.Workloads() != 2 {
		t.Errorf("held: placement workload %s (source %s) %s, %d workloads", p.WorkloadID, source.ID, p.Status, e.mock.Workloads())
	}
	if _, err := e.store.UpdateDesired(ctx, tn.ID, tenant.DesiredChange{Version: held.Version, ComputeConfig: json.RawMessage(appConfig), Labels: map[string]string{"a": "b"}}); !errors.Is(err, tenant.ErrMoving) {
		t.Errorf("a change while moving: %v, want ErrMoving", err)
	}

	targetID := p.Move.Other.WorkloadID
	e.act(t, tn.ID, tenant.MoveAction{Kind: tenant.MoveApprove})
	e.waitMove(t, tn.ID, "")
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)
	done := e.get(t, tn.ID)
	p = done.Placements[0]
	if p.WorkloadID != targetID || done.Simple() || p.Status != tenant.StatusReady || !strings.Contains(string(p.ComputeConfig), "app:2") {
		t.Errorf("after the move: placement %+v", p)
	}
	if e.mock.Workloads() != 1 || e.mock.Calls(source.ID, mock.OpDestroy) != 1 {
		t.Errorf("after the move: %d workloads, %d destroys of the source", e.mock.Workloads(), e.mock.Calls(source.ID, mock.OpDestroy))
	}
	var steps []string
	for _, ev := range e.events(t, tn.ID, tenant.EventMove) {
		steps = append(steps, ev.Message)
	}
	if len(steps) != 5 || !strings.Contains(steps[3], "switched") || !strings.Contains(steps[4], "done") {
		t.Errorf("move events:\n%s", strings.Join(steps, "\n"))
	}

	// A move cancelled before its switch.
	e.act(t, tn.ID, tenant.MoveAction{Kind: tenant.MoveStart, Provider: mock.Name, ComputeConfig: json.RawMessage(appConfig), Hold: true})
	cancelled := e.waitMove(t, tn.ID, tenant.MoveAwaitingApproval).Placements[0].Move.Other.WorkloadID
	e.act(t, tn.ID, tenant.MoveAction{Kind: tenant.MoveCancel})
	e.waitMove(t, tn.ID, "")
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)
	if got := e.get(t, tn.ID).Placements[0]; got.WorkloadID != targetID || e.mock.Calls(cancelled, mock.OpDestroy) != 1 || e.mock.Workloads() != 1 {
		t.Errorf("after the cancel: placement on %s, the target destroyed %d times, %d workloads", got.WorkloadID, e.mock.Calls(cancelled, mock.OpDestroy), e.mock.Workloads())
	}

	// Deleting a tenant whose placement moves destroys both workloads.
	e.act(t, tn.ID, tenant.MoveAction{Kind: tenant.MoveStart, Provider: mock.Name, ComputeConfig: json.RawMessage(appConfig), Hold: true})
	e.waitMove(t, tn.ID, tenant.MoveAwaitingApproval)
	if _, err := e.store.RequestDeletion(ctx, tn.ID, 0, "test"); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(t, 30*time.Second, tenant.StatusDeleted, tn.ID)
	if e.mock.Workloads() != 0 {
		t.Errorf("%d workloads after deleting a moving tenant", e.mock.Workloads())
	}
}

// TestProbeEndpoint: a listening port answers, a closed one does not; a
// URL, a UDP port and a name that does not resolve here are not probed.
func TestProbeEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := l.Addr().String()
	l.Close()
	l, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tt := range []struct {
		e    provider.Endpoint
		want error
	}{
		{provider.Endpoint{Address: l.Addr().String()}, nil},
		{provider.Endpoint{Address: open}, controller.ErrNoAnswer},
		{provider.Endpoint{Address: "mock://acme/app:80"}, nil},
		{provider.Endpoint{Address: open, Protocol: "udp"}, nil},
		{provider.Endpoint{Address: "acme.landlord-tenants.svc.cluster.invalid:8080"}, nil},
	} {
		if err := controller.ProbeEndpoint(t.Context(), tt.e); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.e.Address, err, tt.want)
		}
	}
}

// TestProbeFindsAForwarderWithNothingBehind: a listener that accepts and
// closes at once (docker-proxy with no workload listening behind it) does
// not answer; one that speaks first does.
func TestProbeFindsAForwarderWithNothingBehind(t *testing.T) {
	serve := func(handle func(net.Conn)) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				handle(c)
			}
		}()
		return l.Addr().String()
	}
	closing := serve(func(c net.Conn) { c.Close() })
	greeting := serve(func(c net.Conn) { c.Write([]byte("220 hello\r\n")); time.AfterFunc(time.Second, func() { c.Close() }) })
	if err := controller.ProbeEndpoint(t.Context(), provider.Endpoint{Address: closing}); !errors.Is(err, controller.ErrNoAnswer) {
		t.Errorf("a listener that closes at once: %v, want ErrNoAnswer", err)
	}
	if err := controller.ProbeEndpoint(t.Context(), provider.Endpoint{Address: greeting}); err != nil {
		t.Errorf("a listener that speaks first: %v", err)
	}
}
