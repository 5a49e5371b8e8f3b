package ecsfake

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
)

// noRetry makes one SDK call one request, so a test counts what ECS admits.
func noRetry(o *ecs.Options) { o.Retryer = aws.NopRetryer{} }

func TestDocumentedRatesCoverEveryOperation(t *testing.T) {
	in := map[string]Bucket{}
	for _, b := range DocumentedRates() {
		for _, op := range b.Actions {
			in[op] = b
		}
	}
	for op := range operations {
		if _, ok := in[op]; !ok {
			t.Errorf("%s is in no throttling bucket", op)
		}
	}
	// The rows of the page's table for the operations a provider calls.
	want := map[string][2]int{
		"DescribeClusters":       {50, 20},
		"RegisterTaskDefinition": {20, 1},
		"DescribeTaskDefinition": {50, 20},
		"TagResource":            {20, 10},
		"StopTask":               {100, 40},
		"DescribeTasks":          {100, 20},
		"CreateService":          {50, 5},
		"DescribeServices":       {100, 20},
	}
	for op, w := range want {
		if got := [2]int{in[op].Capacity, in[op].Refill}; got != w {
			t.Errorf("%s: capacity, refill = %v, want %v", op, got, w)
		}
	}
}

func TestThrottlingBurstAndRefill(t *testing.T) {
	ctx := context.Background()
	s, c := newFake(t, Options{Throttling: DocumentedRates()})
	// Service read actions: capacity 100, refill 20 a second, shared by
	// DescribeServices and ListServices.
	describe := func() error {
		_, err := c.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("landlord"), Services: []string{"svc"}}, noRetry)
		return err
	}
	list := func() error {
		_, err := c.ListServices(ctx, &ecs.ListServicesInput{Cluster: aws.String("landlord")}, noRetry)
		return err
	}
	admitted := func(n int) int {
		t.Helper()
		for i := range n {
			call := describe
			if i%2 == 1 {
				call = list
			}
			if err := call(); err != nil {
				if !isThrottling(err) {
					t.Fatalf("call %d: %v", i, err)
				}
				return i
			}
		}
		return n
	}
	if got := admitted(150); got != 100 {
		t.Fatalf("a full bucket admitted %d calls, want its capacity 100", got)
	}
	// Other categories have their own buckets.
	if _, err := c.DescribeClusters(ctx, &ecs.DescribeClustersInput{Clusters: []string{"landlord"}}, noRetry); err != nil {
		t.Fatalf("DescribeClusters with the service read bucket empty: %v", err)
	}
	s.Advance(50 * time.Millisecond) // 20 a second: one token
	if got := admitted(5); got != 1 {
		t.Errorf("after 50ms, %d calls admitted, want 1", got)
	}
	s.Advance(49 * time.Millisecond)
	if got := admitted(5); got != 0 {
		t.Errorf("after 49ms more, %d calls admitted, want 0", got)
	}
	s.Advance(time.Second + time.Millisecond) // 1.05s since the last token: 21 tokens
	if got := admitted(30); got != 21 {
		t.Errorf("after 1.05s, %d calls admitted, want 21", got)
	}
	s.Advance(time.Hour)
	if got := admitted(150); got != 100 {
		t.Errorf("after an hour, %d calls admitted, want the capacity 100", got)
	}
	throttled := s.Throttled()
	if sum := throttled["DescribeServices"] + throttled["ListServices"]; sum != 5 {
		t.Errorf("Throttled() = %v, want the 5 refusals", throttled)
	}
	if calls := s.Calls(); calls["DescribeServices"]+calls["ListServices"] != 101+2+1+22+101 {
		t.Errorf("Calls() = %v: throttled calls are calls", calls)
	}
	s.ResetCalls()
	if got := s.Throttled(); len(got) != 0 {
		t.Errorf("Throttled after ResetCalls = %v", got)
	}
}

func TestThrottlingTaskDefinitionModify(t *testing.T) {
	// Task definition modify actions: capacity 20, refill 1 a second.
	s, c := newFake(t, Options{Throttling: DocumentedRates()})
	ctx := context.Background()
	in := &ecs.RegisterTaskDefinitionInput{Family: aws.String("app"), ContainerDefinitions: oneContainer("nginx")}
	n := 0
	for ; n < 30; n++ {
		if _, err := c.RegisterTaskDefinition(ctx, in, noRetry); err != nil {
			if !isThrottling(err) {
				t.Fatal(err)
			}
			break
		}
	}
	if n != 20 {
		t.Fatalf("%d registrations admitted, want 20", n)
	}
	s.Advance(999 * time.Millisecond)
	if _, err := c.DeregisterTaskDefinition(ctx, &ecs.DeregisterTaskDefinitionInput{TaskDefinition: aws.String("app:1")}, noRetry); !isThrottling(err) {
		t.Errorf("deregister 999ms later: %v, want throttled (shared bucket)", err)
	}
	s.Advance(time.Millisecond)
	if _, err := c.DeregisterTaskDefinition(ctx, &ecs.DeregisterTaskDefinitionInput{TaskDefinition: aws.String("app:1")}, noRetry); err != nil {
		t.Errorf("deregister a second later: %v", err)
	}
	if diff := cmp.Diff(map[string]int{"RegisterTaskDefinition": 1, "DeregisterTaskDefinition": 1}, s.Throttled()); diff != "" {
		t.Errorf("Throttled (-want +got):\n%s", diff)
	}
}

// TestThrottlingAsTheSDKSeesIt: a throttled request is a 400 with
// ThrottlingException "Rate exceeded", which the SDK's standard retryer
// retries as throttling and, its attempts used up, returns as that API
// error.
func TestThrottlingAsTheSDKSeesIt(t *testing.T) {
	rates := Rates{{Category: "Cluster read actions", Actions: []string{"DescribeClusters"}, Capacity: 1, Refill: 1}}
	s, c := newFake(t, Options{Throttling: rates})
	ctx := context.Background()
	if _, err := c.DescribeClusters(ctx, &ecs.DescribeClustersInput{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.DescribeClusters(ctx, &ecs.DescribeClustersInput{})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != CodeThrottling || ae.ErrorMessage() != "Rate exceeded" {
		t.Fatalf("DescribeClusters on an empty bucket: %T %v, want ThrottlingException Rate exceeded", err, err)
	}
	if !retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool() {
		t.Errorf("the SDK does not take %v for throttling", err)
	}
	var me *retry.MaxAttemptsError
	if !errors.As(err, &me) || me.Attempt != 3 {
		t.Errorf("error %v: want the standard retryer's 3 attempts used up", err)
	}
	if got := s.Throttled()["DescribeClusters"]; got != 3 {
		t.Errorf("Throttled DescribeClusters = %d, want 3", got)
	}
	status, _, body := rawCall(t, s, "DescribeClusters", `{}`, nil)
	if status != http.StatusBadRequest || body["__type"] != CodeThrottling || body["message"] != "Rate exceeded" {
		t.Errorf("raw answer %d %v", status, body)
	}
}

func TestNoThrottlingByDefault(t *testing.T) {
	s, c := newFake(t, Options{})
	for range 200 {
		if _, err := c.ListServices(context.Background(), &ecs.ListServicesInput{Cluster: aws.String("landlord")}, noRetry); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Throttled(); len(got) != 0 {
		t.Errorf("Throttled() = %v without Options.Throttling", got)
	}
}

func isThrottling(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == CodeThrottling
}

// oneContainer is a container list of one container running image.
func oneContainer(image string) []types.ContainerDefinition {
	return []types.ContainerDefinition{{Name: aws.String("app"), Image: aws.String(image)}}
}
