//go:build !unix

package dockertest

// hold does nothing where flock is missing: no run can be checked, and
// only stale resources are swept.
func hold(string, string) error { return nil }

// release does nothing where flock is missing.
func release() {}

// lockState cannot tell where flock is missing.
func lockState(string) runState { return runUnknown }
