//go:build !unix

package servetest

// hold does nothing where flock is missing: the directory stays after the
// test binary exits.
func hold(string) error { return nil }

// sweep does nothing where flock is missing.
func sweep(string) {}
