package ecs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsecs "github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestEndToEndDriftRepaired drives `landlord serve` against the fake ECS:
// an operator's `aws ecs update-service` on a ready tenant (desired count
// and a second target group) is put back at the next resync, with a
// drift_detected event naming both; and a set that drops load_balancers
// takes the target group off the service.
func TestEndToEndDriftRepaired(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := ecsfake.Start(t, ecsfake.Options{StepTime: 50 * time.Millisecond, DrainTime: 200 * time.Millisecond})
	l := startServeECS(t, srv, `controller:
  workers: 2
  resync: 1s
  lease_ttl: 2s
  progress_deadline: 10s
`)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tenants := l.Client().Tenants()

	ours := targetGroup("e2e-drift")
	withLB := json.RawMessage(fmt.Sprintf(`{"image": "ghcr.io/example/app:1.0", "ports": [{"container_port": 8080}],
		"load_balancers": [{"target_group_arn": %q, "container_name": "app", "container_port": 8080}]}`, ours))
	created := servetest.CreateTenant(ctx, t, tenants, "e2e-drift", withLB)
	tn, err := tenants.Wait(ctx, created.ID, llclient.UntilReady, nil)
	if err != nil {
		t.Fatalf("wait ready: %v", err)
	}
	checkServes(t, srv, tn)
	name := "landlord-e2e-drift"

	// The operator scales the service and adds a target group by hand.
	start := time.Now()
	_, err = srv.Client(ctx).UpdateService(ctx, &awsecs.UpdateServiceInput{
		Cluster: aws.String(srv.ClusterARN("landlord")), Service: aws.String(name), DesiredCount: aws.Int32(3),
		LoadBalancers: []types.LoadBalancer{
			{TargetGroupArn: aws.String(ours), ContainerName: aws.String("app"), ContainerPort: aws.Int32(8080)},
			{TargetGroupArn: aws.String(targetGroup("by-hand")), ContainerName: aws.String("app"), ContainerPort: aws.Int32(8080)},
		},
	})
	if err != nil {
		t.Fatalf("update-service by hand: %v", err)
	}
	poll.Until(t, "the hand-made change is put back", 30*time.Second, func() (bool, string) {
		s := liveServices(srv, created.ID)
		if len(s) != 1 {
			return false, fmt.Sprintf("%d live services", len(s))
		}
		lbs := targetGroups(s[0])
		return s[0].DesiredCount == 1 && slices.Equal(lbs, []string{ours}), fmt.Sprintf("desired %d, target groups %v", s[0].DesiredCount, lbs)
	})
	t.Logf("the hand-made change was put back %s after it was made (resync 1s)", time.Since(start).Round(time.Millisecond))
	drift := driftEvents(ctx, t, tenants, created.ID)
	if !slices.ContainsFunc(drift, func(e llclient.Event) bool {
		return strings.Contains(e.Message, "service/desired_count") && strings.Contains(e.Message, "service/load_balancers")
	}) {
		t.Errorf("no drift_detected event names service/desired_count and service/load_balancers: %+v", drift)
	}
	poll.Until(t, "the tenant is ready at the repaired service's tasks", 30*time.Second, func() (bool, string) {
		got, err := tenants.Get(ctx, created.ID, llclient.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		want := runningAddresses(srv, name)
		have := endpointAddresses(got)
		return got.Status == llclient.StatusReady && len(want) == 1 && slices.Equal(have, want), fmt.Sprintf("status %s, endpoints %v, running tasks at %v", got.Status, have, want)
	})

	// A set that drops load_balancers takes the target group off.
	tn, err = tenants.Get(ctx, created.ID, llclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := tenants.Replace(ctx, created.ID, llclient.ReplaceTenantRequest{ComputeConfig: appConfig("ghcr.io/example/app:1.0")}, llclient.UpdateOptions{IfMatch: tn.Version})
	if err != nil {
		t.Fatalf("set without load_balancers: %v", err)
	}
	tn, err = tenants.Wait(ctx, created.ID, func(tn llclient.Tenant) (bool, error) {
		if tn.ObservedGeneration < set.Generation {
			return false, nil
		}
		return llclient.UntilReady(tn)
	}, nil)
	if err != nil {
		t.Fatalf("wait ready at generation %d: %v", set.Generation, err)
	}
	s := liveServices(srv, created.ID)
	if len(s) != 1 || len(s[0].LoadBalancers) != 0 {
		t.Fatalf("after a set without load_balancers the service has target groups %v", targetGroups(s[0]))
	}
	if got := serviceTag(s[0], "landlord:generation"); got != fmt.Sprint(set.Generation) {
		t.Errorf("the service is tagged generation %s, want %d", got, set.Generation)
	}
	checkServes(t, srv, tn)
}

// driftEvents are the tenant's drift_detected events.
func driftEvents(ctx context.Context, t *testing.T, tenants *llclient.Tenants, id string) []llclient.Event {
	t.Helper()
	var out []llclient.Event
	for e, err := range tenants.AllEvents(ctx, id, llclient.EventOptions{}) {
		if err != nil {
			t.Fatalf("events: %v", err)
		}
		if e.Type == "drift_detected" {
			out = append(out, e)
		}
	}
	return out
}

func targetGroups(s types.Service) []string {
	var out []string
	for _, lb := range s.LoadBalancers {
		out = append(out, aws.ToString(lb.TargetGroupArn))
	}
	slices.Sort(out)
	return out
}

// runningAddresses are the host:8080 addresses of the service's running
// tasks of its current task definition, sorted.
func runningAddresses(srv *ecsfake.Server, service string) []string {
	var current string
	for _, s := range srv.Services("landlord") {
		if aws.ToString(s.ServiceName) == service && aws.ToString(s.Status) == "ACTIVE" {
			current = aws.ToString(s.TaskDefinition)
		}
	}
	var out []string
	for _, task := range srv.Tasks("landlord", service) {
		if aws.ToString(task.LastStatus) != "RUNNING" || aws.ToString(task.TaskDefinitionArn) != current {
			continue
		}
		for _, a := range task.Attachments {
			for _, d := range a.Details {
				if aws.ToString(d.Name) == "privateIPv4Address" {
					out = append(out, aws.ToString(d.Value)+":8080")
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func endpointAddresses(tn *llclient.Tenant) []string {
	var out []string
	for _, e := range tn.Endpoints {
		out = append(out, e.Address)
	}
	slices.Sort(out)
	return out
}
