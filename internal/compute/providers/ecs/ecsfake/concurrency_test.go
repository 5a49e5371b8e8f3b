package ecsfake

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
)

// TestConcurrentTenants drives many services at once, as the reconciler's
// workers would, so the race detector sees the fake's locking.
func TestConcurrentTenants(t *testing.T) {
	ctx := context.Background()
	s, c := newFake(t, Options{Latency: time.Millisecond})
	mustRegister(t, c, "app", "nginx", fargate)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			name := fmt.Sprintf("tenant-%d", i)
			if _, err := c.CreateService(ctx, serviceInput(name, "app", 1)); err != nil {
				errs <- err
				return
			}
			if _, err := c.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("landlord"), Services: []string{name}}); err != nil {
				errs <- err
				return
			}
			if _, err := c.DeleteService(ctx, &ecs.DeleteServiceInput{Cluster: aws.String("landlord"), Service: aws.String(name), Force: aws.Bool(true)}); err != nil {
				errs <- err
			}
		})
		wg.Go(func() { s.Advance(10 * time.Millisecond) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := s.Calls(); got["CreateService"] != 20 || got["DeleteService"] != 20 {
		t.Errorf("Calls = %v", got)
	}
}
