package ecsfake

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// Inspection reads and changes the fake's state directly, for tests that
// want to know what ECS holds without going through the API (and without
// counting as calls or being subject to injected faults or CreateLag).

// Services returns every service in the cluster (a name or ARN), INACTIVE
// ones included, with tags, in creation order. An unknown cluster has none.
func (s *Server) Services(cluster string) []types.Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sync()
	c, ok := s.clusters[clusterName(&cluster)]
	if !ok {
		return nil
	}
	out := make([]types.Service, 0, len(c.services))
	for _, svc := range c.services {
		out = append(out, *s.describeService(svc, true))
	}
	return out
}

// TaskDefinitions returns every revision of a family, oldest first,
// deregistered ones included.
func (s *Server) TaskDefinitions(family string) []types.TaskDefinition {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sync()
	revs := s.families[family]
	out := make([]types.TaskDefinition, len(revs))
	for i, td := range revs {
		out[i] = td.def
	}
	return out
}

// Tasks returns the tasks of the named service, running and recently
// stopped, oldest first, with tags.
func (s *Server) Tasks(cluster, service string) []types.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sync()
	c, ok := s.clusters[clusterName(&cluster)]
	if !ok {
		return nil
	}
	var out []types.Task
	for _, svc := range c.services {
		if svc.name() != serviceName(service) {
			continue
		}
		for _, list := range [][]*task{svc.stopped, svc.tasks} {
			for _, t := range list {
				out = append(out, t.describe(true))
			}
		}
	}
	return out
}

// StopTask stops a task out of band, as if its essential container exited;
// the service scheduler replaces it. taskArn may be an ARN or a task id.
func (s *Server) StopTask(cluster, taskArn, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.sync()
	name := clusterName(&cluster)
	t := s.findTask(taskArn)
	if t == nil {
		t = s.findTask(s.arn("task/" + name + "/" + taskArn))
	}
	if t == nil || t.svc.cluster.name != name || t.status == taskStopped {
		return fmt.Errorf("ecsfake: stop task: no running task %q in cluster %q", taskArn, cluster)
	}
	svc := t.svc
	s.stopTask(t, now, reason, types.TaskStopCodeEssentialContainerExited)
	svc.steady = false
	s.reconcile(svc, now)
	return nil
}

// DeleteServiceOutOfBand removes a service at once, as if someone deleted
// it in the console and it has already gone INACTIVE.
func (s *Server) DeleteServiceOutOfBand(cluster, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.sync()
	c, ok := s.clusters[clusterName(&cluster)]
	if !ok {
		return fmt.Errorf("ecsfake: delete service: no cluster %q", cluster)
	}
	svc := c.find(serviceName(name))
	if svc == nil || !svc.live() {
		return fmt.Errorf("ecsfake: delete service: no live service %q in cluster %q", name, cluster)
	}
	s.scaleToZero(svc, now)
	svc.status = statusInactive
	svc.drainingAt, svc.inactiveAt = now, now
	return nil
}

// Advance moves the fake's ManualClock forward by d and brings the state up
// to the new time. It panics if the fake was not given Options.Clock.
func (s *Server) Advance(d time.Duration) {
	if s.opts.Clock == nil {
		panic("ecsfake: Advance needs Options.Clock")
	}
	s.opts.Clock.Advance(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sync()
}
