package ecs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// ECS's describe calls take many names at once, and its request rates are
// counted in calls ("Request throttling for the Amazon ECS API": the service
// read actions share a bucket of 100 refilled at 20 a second, the cluster
// resource read actions, ListTasks and DescribeTasks among them, another of
// the same size): a resync reading thousands of tenants' services one call
// each runs out of both. So concurrent reads of one cluster through one
// client are coalesced, each cluster's own batchers answering every
// GetStatus, Inspect, Provision and Destroy in it.

// Batch limits of ECS's describe calls: API_DescribeServices "services …
// You may specify up to 10 services to describe", API_DescribeTasks "tasks
// … A list of up to 100 task IDs or full ARN entries".
const (
	describeServicesMax = 10
	describeTasksMax    = 100
)

// clusterReads coalesces the describe calls of one cluster through one
// client.
type clusterReads struct {
	services *batcher[serviceLookup] // by service name
	tasks    *batcher[taskLookup]    // by task ARN

	mu sync.Mutex
	// known holds, by service name, the tasks meant to run that the
	// service's last listing found (see Provider.knownTasks).
	known map[string][]string
}

// knownOf returns the tasks the service's last listing found.
func (r *clusterReads) knownOf(service string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.known[service]
}

// remember keeps the tasks a listing of the service found, or forgets them
// when there are none.
func (r *clusterReads) remember(service string, arns []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(arns) == 0 {
		delete(r.known, service)
		return
	}
	r.known[service] = arns
}

// serviceLookup is what DescribeServices says of one service name: the
// services of the name, or why it could not say.
type serviceLookup struct {
	services []types.Service
	err      error
}

// taskLookup is what DescribeTasks says of one task ARN.
type taskLookup struct {
	task types.Task
	err  error
}

type readsKey struct {
	client  *ecs.Client
	cluster string
}

// reads returns the batchers of cluster through c, made on first use.
// There is one pair for each client and cluster the provider reads, and
// each keeps no goroutine when idle.
func (p *Provider) reads(c *ecs.Client, cluster string) *clusterReads {
	key := readsKey{client: c, cluster: cluster}
	if v, ok := p.batches.Load(key); ok {
		return v.(*clusterReads)
	}
	r := &clusterReads{
		services: newBatcher(describeServicesMax, func(ctx context.Context, names []string) (map[string]serviceLookup, error) {
			return describeServices(ctx, c, cluster, names)
		}),
		tasks: newBatcher(describeTasksMax, func(ctx context.Context, arns []string) (map[string]taskLookup, error) {
			return describeTasks(ctx, c, cluster, arns)
		}),
		known: map[string][]string{},
	}
	v, _ := p.batches.LoadOrStore(key, r)
	return v.(*clusterReads)
}

// describeServices describes the named services of cluster, with their
// tags. A name ECS reports MISSING, or has forgotten, is absent from the
// result.
func describeServices(ctx context.Context, c *ecs.Client, cluster string, names []string) (map[string]serviceLookup, error) {
	out, err := c.DescribeServices(ctx, &ecs.DescribeServicesInput{
		Cluster: aws.String(cluster), Services: names, Include: []types.ServiceField{types.ServiceFieldTags},
	})
	if isCode(err, "ServiceNotFoundException") {
		// A service ECS has forgotten (an INACTIVE one past its retention)
		// is reported MISSING, but some endpoints fail the whole call
		// instead. For a lone name that means none; in a batch, it does not
		// say which, so each is asked alone.
		found := map[string]serviceLookup{}
		if len(names) == 1 {
			return found, nil
		}
		for _, name := range names {
			one, err := describeServices(ctx, c, cluster, []string{name})
			if err != nil {
				return nil, err
			}
			if r, ok := one[name]; ok {
				found[name] = r
			}
		}
		return found, nil
	}
	if err != nil {
		return nil, err
	}
	found := make(map[string]serviceLookup, len(names))
	for _, s := range out.Services {
		name := aws.ToString(s.ServiceName)
		r := found[name]
		r.services = append(r.services, s)
		found[name] = r
	}
	for _, f := range out.Failures {
		if reason := aws.ToString(f.Reason); reason != "MISSING" {
			name := lastSegment(aws.ToString(f.Arn))
			found[name] = serviceLookup{err: failure("describe service "+name, f)}
		}
	}
	return found, nil
}

// describeTasks describes tasks of cluster. A task ECS reports MISSING is
// absent from the result.
func describeTasks(ctx context.Context, c *ecs.Client, cluster string, arns []string) (map[string]taskLookup, error) {
	out, err := c.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String(cluster), Tasks: arns})
	if err != nil {
		return nil, err
	}
	found := make(map[string]taskLookup, len(arns))
	for _, t := range out.Tasks {
		found[aws.ToString(t.TaskArn)] = taskLookup{task: t}
	}
	for _, f := range out.Failures {
		if reason := aws.ToString(f.Reason); reason != "MISSING" {
			arn := aws.ToString(f.Arn)
			found[arn] = taskLookup{err: failure("describe task "+arn, f)}
		}
	}
	return found, nil
}

// failure is an error for what a describe call reported it could not
// describe, other than MISSING; it is retried.
func failure(op string, f types.Failure) error {
	msg := fmt.Sprintf("ecs: %s: ECS reports %s", op, aws.ToString(f.Reason))
	if d := aws.ToString(f.Detail); d != "" {
		msg += ": " + d
	}
	return provider.Retryable(errors.New(msg))
}

// lastSegment is a service's name in its ARN (either format).
func lastSegment(arn string) string {
	return arn[strings.LastIndex(arn, "/")+1:]
}
