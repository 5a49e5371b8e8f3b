package ecsfake

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// maxEvents is how many service events ECS returns.
const maxEvents = 100

// circuitBreakerReason is the rolloutStateReason ECS gives a deployment the
// circuit breaker failed.
const circuitBreakerReason = "ECS deployment circuit breaker: tasks failed to start."

func (s *Server) newDeployment(now time.Time, td *taskDef, desired int32, network *types.NetworkConfiguration, launchType types.LaunchType, capacity []types.CapacityProviderStrategyItem, platform *string) *deployment {
	id := fmt.Sprintf("ecs-svc/%019d", rand.Int64N(9e18))
	return &deployment{
		id:         id,
		status:     statusPrimary,
		def:        td,
		desired:    desired,
		rollout:    types.DeploymentRolloutStateInProgress,
		reason:     "ECS deployment " + id + " in progress.",
		createdAt:  now,
		updatedAt:  now,
		network:    network,
		launchType: launchType,
		capacity:   capacity,
		platform:   platform,
	}
}

// startDeployment makes d the PRIMARY deployment; the old ones stay ACTIVE
// until d has all its tasks running, then their tasks are stopped.
func (s *Server) startDeployment(svc *service, now time.Time, d *deployment) {
	for _, old := range svc.deployments {
		old.status = statusActive
		old.updatedAt = now
	}
	svc.deployments = append([]*deployment{d}, svc.deployments...)
	svc.steady = false
}

// reconcile does what the ECS service scheduler does for one service at
// time now: start or stop tasks of the primary deployment to match its
// desired count, drain older deployments once the primary is all running,
// and mark the rollout complete.
func (s *Server) reconcile(svc *service, now time.Time) {
	if svc.status != statusActive {
		return
	}
	p := svc.primary()
	if p.rollout != types.DeploymentRolloutStateFailed {
		var live []*task
		for _, t := range svc.tasks {
			if t.dep == p {
				live = append(live, t)
			}
		}
		var started []*task
		for n := len(live); n < int(p.desired); n++ {
			started = append(started, s.startTask(svc, p, now))
		}
		if len(started) > 0 {
			svc.event(now, "has started %d tasks: %s.", len(started), taskList(started))
			p.updatedAt = now
		}
		if extra := len(live) - int(p.desired); extra > 0 {
			stop := live[len(live)-extra:]
			for _, t := range stop {
				s.stopTask(t, now, "Scaling activity initiated by (deployment "+p.id+")", types.TaskStopCodeServiceSchedulerInitiated)
			}
			svc.event(now, "has stopped %d running tasks: %s.", len(stop), taskList(stop))
			p.updatedAt = now
		}
	}
	if p.rollout == types.DeploymentRolloutStateFailed || svc.count(p, taskRunning) != int(p.desired) || svc.count(p, "") != int(p.desired) {
		return
	}
	var drained []*task
	for _, t := range append([]*task(nil), svc.tasks...) {
		if t.dep != p {
			s.stopTask(t, now, "Scaling activity initiated by (deployment "+p.id+")", types.TaskStopCodeServiceSchedulerInitiated)
			drained = append(drained, t)
		}
	}
	if len(drained) > 0 {
		svc.event(now, "has stopped %d running tasks: %s.", len(drained), taskList(drained))
	}
	svc.deployments = svc.deployments[:1]
	if p.rollout == types.DeploymentRolloutStateInProgress {
		p.rollout = types.DeploymentRolloutStateCompleted
		p.reason = "ECS deployment " + p.id + " completed."
		p.updatedAt = now
		svc.lastCompleted = p
	}
	if !svc.steady {
		svc.steady = true
		svc.event(now, "has reached a steady state.")
	}
}

// taskFailed records that a task of d failed to start and trips the
// deployment circuit breaker if that was one failure too many.
func (s *Server) taskFailed(svc *service, d *deployment, now time.Time) {
	d.failed++
	d.updatedAt = now
	cb := svc.spec.DeploymentConfiguration.DeploymentCircuitBreaker
	if cb == nil || !cb.Enable || d != svc.primary() || d.rollout != types.DeploymentRolloutStateInProgress {
		return
	}
	if d.failed < failureThreshold(d.desired) {
		return
	}
	d.rollout = types.DeploymentRolloutStateFailed
	d.reason = circuitBreakerReason
	svc.event(now, "deployment %s deployment failed: tasks failed to start.", d.id)
	if !cb.Rollback || svc.lastCompleted == nil {
		return
	}
	prev := svc.lastCompleted
	svc.event(now, "rolling back to deployment %s.", prev.id)
	s.startDeployment(svc, now, s.newDeployment(now, prev.def, svc.desired, prev.network, prev.launchType, prev.capacity, prev.platform))
}

// failureThreshold is the number of failed tasks at which the circuit
// breaker fails a deployment: half the desired count rounded up, at least 3
// and at most 200.
func failureThreshold(desired int32) int32 {
	return min(max(3, (desired+1)/2), 200)
}

// count returns how many of the service's unstopped tasks belong to d and
// have the given status ("" for any).
func (svc *service) count(d *deployment, status string) int {
	n := 0
	for _, t := range svc.tasks {
		if t.dep == d && (status == "" || t.status == status) {
			n++
		}
	}
	return n
}

// event records a service event, newest first, worded as ECS words them.
func (svc *service) event(now time.Time, format string, args ...any) {
	e := types.ServiceEvent{
		Id:        aws.String(randomUUID()),
		CreatedAt: aws.Time(now),
		Message:   aws.String("(service " + svc.name() + ") " + fmt.Sprintf(format, args...)),
	}
	events := append([]types.ServiceEvent{e}, svc.events...)
	if len(events) > maxEvents {
		events = events[:maxEvents]
	}
	svc.events = events
}

func taskList(tasks []*task) string {
	parts := make([]string, len(tasks))
	for i, t := range tasks {
		parts[i] = "(task " + t.id + ")"
	}
	return strings.Join(parts, " ")
}
