package ecsfake

import "maps"

// fault is a pending injected failure.
type fault struct {
	op   string // operation name, or "*" for any
	code string
	left int
}

// FailNext makes the next n calls of op (an operation name such as
// "CreateService", or "*" for any operation) fail with the AWS error code.
// ThrottlingException goes out as HTTP 400 and ServerException or
// InternalFailure as 500, as ECS sends them, so the SDK's retryer treats
// them as it would in production. Faults queue: a later FailNext applies
// once earlier ones for the same calls are used up.
func (s *Server) FailNext(op, code string, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fault{op: op, code: code, left: n})
}

// injectedFault uses up one pending fault that matches op, if any.
func (s *Server) injectedFault(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.faults {
		f := &s.faults[i]
		if f.op != op && f.op != "*" {
			continue
		}
		f.left--
		code := f.code
		if f.left == 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		if code == CodeThrottling {
			return errorf(code, "Rate exceeded (injected %s for %s).", code, op)
		}
		return errorf(code, "Injected %s for %s.", code, op)
	}
	return nil
}

// Calls returns how many requests each operation has received since the
// fake started or ResetCalls, counting retries and injected failures: it is
// what the client spent, not what succeeded.
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// ResetCalls zeroes the call counts and the Throttled counts.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.calls)
	clear(s.throttled)
}

func (s *Server) countCall(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
}

// FailImage makes every task with a container using image fail to start:
// the task stops while PENDING with stoppedReason reason and stop code
// TaskFailedToStart, and the service starts a replacement, as ECS does when
// an image cannot be pulled. An empty reason lets the image start again.
// The image is matched exactly as written in the container definition.
func (s *Server) FailImage(image, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if reason == "" {
		delete(s.failImages, image)
		return
	}
	s.failImages[image] = reason
}
