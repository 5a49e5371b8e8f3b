package ecs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// A service of more tasks than a ListTasks page (100) runs when all its
// tasks do: every page is listed and described.
func TestServiceOfManyTasksRuns(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "many", `{"image": "ghcr.io/example/app:1", "ports": [{"container_port": 8080}], "desired_count": 150}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	st := e.waitState(t, spec.TenantID, provider.StateRunning)
	if len(st.Endpoints) != 150 {
		t.Errorf("%d endpoints, want one for each of the 150 tasks", len(st.Endpoints))
	}
}

// ECS forgets an INACTIVE service after a while, and an endpoint may then
// answer DescribeServices with ServiceNotFoundException rather than a
// MISSING failure: either way there is no service of the name.
func TestForgottenServiceIsNone(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "purged", `{"image": "ghcr.io/example/app:1"}`)
	e.srv.FailNext("DescribeServices", ecsfake.CodeServiceNotFound, 1)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatalf("Provision when DescribeServices says ServiceNotFoundException = %v; want the service created", err)
	}
	if n := len(tenantServices(e.srv, spec.TenantID)); n != 1 {
		t.Fatalf("%d services of the tenant, want 1", n)
	}

	ghost := e.spec(t, "ghost", `{"image": "ghcr.io/example/app:1"}`)
	e.srv.FailNext("DescribeServices", ecsfake.CodeServiceNotFound, 1)
	_, err := e.p.GetStatusOf(context.Background(), provider.TenantRef{ID: ghost.TenantID, Name: ghost.TenantName, Provider: ecs.Name,
		Config: json.RawMessage(`{"image": "ghcr.io/example/app:1"}`)})
	if !errors.Is(err, provider.ErrTenantNotFound) || provider.IsTerminal(err) {
		t.Errorf("GetStatusOf when DescribeServices says ServiceNotFoundException = %v; want ErrTenantNotFound", err)
	}
}

// gate is an HTTP client that holds the first request of one operation
// until the test opens it, and counts that operation's requests.
type gate struct {
	op     string
	held   chan struct{} // closed once the first request is held
	open   chan struct{}
	seen   atomic.Int32
	client *http.Client
}

func newGate(op string) *gate {
	return &gate{op: op, held: make(chan struct{}), open: make(chan struct{}), client: &http.Client{}}
}

func (g *gate) Do(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.Header.Get("X-Amz-Target"), "."+g.op) && g.seen.Add(1) == 1 {
		close(g.held)
		<-g.open
	}
	return g.client.Do(req)
}

// waitSeen waits until the gate has seen n requests.
func (g *gate) waitSeen(t *testing.T, n int32) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("%d %s requests", n, g.op), 30*time.Second, func() (bool, string) {
		seen := g.seen.Load()
		return seen >= n, fmt.Sprintf("%d requests", seen)
	})
}

// Concurrent status reads of tenants in one cluster share DescribeServices
// calls of up to 10 services, each caller getting its own tenant's.
func TestStatusReadsAreBatched(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	var refs []provider.TenantRef
	for i := range 21 {
		spec := e.spec(t, fmt.Sprintf("batched-%02d", i), `{"image": "ghcr.io/example/app:1", "ports": [{"container_port": 8080}]}`)
		res, err := e.p.Provision(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, provider.TenantRef{ID: spec.TenantID, Name: spec.TenantName, Provider: ecs.Name,
			Config: json.RawMessage(`{"image": "ghcr.io/example/app:1"}`), ResourceIDs: res.ResourceIDs})
	}
	for _, r := range refs {
		e.waitState(t, r.ID, provider.StateRunning)
	}
	ghost := e.spec(t, "batched-ghost", `{"image": "ghcr.io/example/app:1"}`)
	ghostRef := provider.TenantRef{ID: ghost.TenantID, Name: ghost.TenantName, Provider: ecs.Name, Config: json.RawMessage(`{"image": "ghcr.io/example/app:1"}`)}

	// statuses reads refs at once through a new provider whose first
	// DescribeServices is held until held more have been made, and checks that each caller got its own
	// tenant's service.
	statuses := func(t *testing.T, refs []provider.TenantRef, held int32, whileHeld func()) {
		t.Helper()
		// The SDK adds a CA bundle from the environment to its own HTTP
		// client only; this machine sets one.
		t.Setenv("AWS_CA_BUNDLE", "")
		g := newGate("DescribeServices")
		p, err := ecs.New(context.Background(), ecs.Options{Block: json.RawMessage(fargateBlock(e.srv)), HashKey: hashKey, Credentials: fakeCredentials, HTTPClient: g})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(refs))
		got := make([]*provider.ComputeStatus, len(refs))
		read := func(i int) { got[i], errs[i] = p.GetStatusOf(context.Background(), refs[i]) }
		first := make(chan struct{})
		wg.Go(func() { defer close(first); read(0) })
		select {
		case <-g.held:
		case <-first:
			t.Fatalf("the first status read made no DescribeServices call: %v, %v", got[0], errs[0])
		}
		whileHeld()
		for i := 1; i < len(refs); i++ {
			wg.Go(func() { read(i) })
		}
		g.waitSeen(t, 1+held)
		close(g.open)
		wg.Wait()
		for i, r := range refs {
			switch {
			case r.ID == ghost.TenantID:
				if !errors.Is(errs[i], provider.ErrTenantNotFound) {
					t.Errorf("status of a tenant without a service = %v, %v; want ErrTenantNotFound", got[i], errs[i])
				}
			case errs[i] != nil:
				t.Errorf("status of %s: %v", r.Name, errs[i])
			case got[i].TenantID != r.ID || got[i].Metadata["service"] != r.ResourceIDs["service"] || got[i].State != provider.StateRunning || len(got[i].Endpoints) != 1:
				t.Errorf("status of %s = %+v; want its own service running", r.Name, got[i])
			}
		}
	}

	t.Run("coalesced", func(t *testing.T) {
		e.srv.ResetCalls()
		// While the first call is held, the other 20 go in two full calls.
		statuses(t, refs, 2, func() {})
		if n := e.srv.Calls()["DescribeServices"]; n != 3 {
			t.Errorf("21 status reads made %d DescribeServices calls, want 3", n)
		}
		if n := e.srv.Calls()["DescribeTasks"]; n > 21 || n < 1 {
			t.Errorf("%d DescribeTasks calls for 21 tenants", n)
		}
		t.Logf("calls of 21 concurrent status reads: %v", e.srv.Calls())
	})
	t.Run("one of a call forgotten", func(t *testing.T) {
		// A call of ten, one of them a service ECS forgot, is refused
		// whole; each is then asked alone.
		e.srv.ResetCalls()
		batch := append([]provider.TenantRef{}, refs[:10]...)
		batch = append(batch, ghostRef)
		statuses(t, batch, 11, func() { e.srv.FailNext("DescribeServices", ecsfake.CodeServiceNotFound, 1) })
		if n := e.srv.Calls()["DescribeServices"]; n != 12 {
			t.Errorf("%d DescribeServices calls, want 12: the held one, the refused one, and each of its ten alone", n)
		}
	})
}

// A status read of a service whose tasks are the ones it last listed, as
// many as ECS counts, describes them without listing them again; a task
// stopped or started, by ECS or by hand, is listed again at the next read.
func TestSteadyStatusListsNoTasks(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "steady", `{"image": "ghcr.io/example/app:1", "ports": [{"container_port": 8080}], "desired_count": 2}`)
	res, err := e.p.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	ref := provider.TenantRef{ID: spec.TenantID, Name: spec.TenantName, Provider: ecs.Name, Config: json.RawMessage(`{"image": "ghcr.io/example/app:1"}`), ResourceIDs: res.ResourceIDs}
	status := func() *provider.ComputeStatus {
		t.Helper()
		st, err := e.p.GetStatusOf(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	status()
	e.srv.ResetCalls()
	before := status()
	if got := e.srv.Calls(); got["ListTasks"] != 0 || got["DescribeTasks"] != 1 || before.State != provider.StateRunning || len(before.Endpoints) != 2 {
		t.Fatalf("a steady service's status: %v, %d endpoints, calls %v; want it running at two endpoints without ListTasks", before.State, len(before.Endpoints), got)
	}

	// A task stopped by hand is replaced: the next reads list again and
	// find the replacement's address.
	service := res.ResourceIDs["service"][strings.LastIndex(res.ResourceIDs["service"], "/")+1:]
	stopped := e.srv.Tasks("landlord", service)[0]
	if err := e.srv.StopTask("landlord", aws.ToString(stopped.TaskArn), "stopped by hand"); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetCalls()
	after := e.waitState(t, spec.TenantID, provider.StateRunning)
	if e.srv.Calls()["ListTasks"] == 0 {
		t.Errorf("the status after a task stopped listed no task: %v", e.srv.Calls())
	}
	var stoppedIP string
	for _, a := range stopped.Attachments {
		for _, d := range a.Details {
			if aws.ToString(d.Name) == "privateIPv4Address" {
				stoppedIP = aws.ToString(d.Value)
			}
		}
	}
	for _, ep := range after.Endpoints {
		if stoppedIP == "" || strings.HasPrefix(ep.Address, stoppedIP+":") {
			t.Errorf("endpoint %s is the stopped task's (%q)", ep.Address, stoppedIP)
		}
	}
	if len(after.Endpoints) != 2 {
		t.Errorf("%d endpoints after the replacement, want 2", len(after.Endpoints))
	}
}
