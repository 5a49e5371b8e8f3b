package ecsfake

import "time"

// maxSteps bounds the work one request can do catching up. A service whose
// image never pulls and has no circuit breaker retries forever; after a long
// idle spell the fake skips ahead rather than replay every retry.
const maxSteps = 100_000

// sync brings the state up to the clock's now and returns it. State moves
// only here, lazily, so a fake on a manual clock is fully deterministic.
// The caller holds s.mu.
func (s *Server) sync() time.Time {
	now := s.now()
	if now.Before(s.at) {
		now = s.at
	}
	for range maxSteps {
		next, ok := s.nextEvent()
		if !ok || next.After(now) {
			break
		}
		s.at = next
		s.fire(next)
	}
	if next, ok := s.nextEvent(); ok && !next.After(now) {
		s.skipAhead(now)
	}
	s.at = now
	for _, c := range s.clusters {
		for _, svc := range c.services {
			s.reconcile(svc, now)
		}
	}
	s.forget(now)
	return now
}

// nextEvent returns the earliest time something is due to change: a task
// finishing a state or a DRAINING service becoming INACTIVE.
func (s *Server) nextEvent() (time.Time, bool) {
	var next time.Time
	found := false
	consider := func(t time.Time) {
		if !found || t.Before(next) {
			next, found = t, true
		}
	}
	for _, c := range s.clusters {
		for _, svc := range c.services {
			if svc.status == statusDraining {
				consider(svc.drainingAt.Add(s.opts.DrainTime))
			}
			for _, t := range svc.tasks {
				if t.status != taskRunning {
					consider(t.since.Add(s.opts.StepTime))
				}
			}
		}
	}
	return next, found
}

// fire applies every change due at time at, then lets each service's
// scheduler react to it (replacing failed tasks, draining old deployments).
func (s *Server) fire(at time.Time) {
	for _, c := range s.clusters {
		for _, svc := range c.services {
			if svc.status == statusDraining && !svc.drainingAt.Add(s.opts.DrainTime).After(at) {
				svc.status = statusInactive
				svc.inactiveAt = at
			}
			for _, t := range append([]*task(nil), svc.tasks...) {
				if t.status != taskRunning && !t.since.Add(s.opts.StepTime).After(at) {
					s.advanceTask(t, at)
				}
			}
		}
	}
	for _, c := range s.clusters {
		for _, svc := range c.services {
			s.reconcile(svc, at)
		}
	}
}

// skipAhead restarts the clock of every task still starting, for when
// catching up would take more than maxSteps.
func (s *Server) skipAhead(now time.Time) {
	for _, c := range s.clusters {
		for _, svc := range c.services {
			if svc.status == statusDraining {
				svc.status = statusInactive
				svc.inactiveAt = now
			}
			for _, t := range svc.tasks {
				t.since = now
			}
		}
	}
}

// forget drops INACTIVE services once they are past retention, as ECS
// stops returning them.
func (s *Server) forget(now time.Time) {
	for _, c := range s.clusters {
		kept := c.services[:0]
		for _, svc := range c.services {
			if svc.status == statusInactive && !svc.inactiveAt.Add(s.opts.InactiveRetention).After(now) {
				continue
			}
			kept = append(kept, svc)
		}
		clear(c.services[len(kept):])
		c.services = kept
	}
}
