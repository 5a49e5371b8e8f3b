package service

import "slices"

// Versions are the versions of a tenant or a rollout that a change accepts
// (an HTTP If-Match): none accepts any. A version no record has (-1, for a
// weak ETag) matches nothing.
type Versions []int64

// Any reports whether v accepts any version.
func (v Versions) Any() bool { return len(v) == 0 }

// Match reports whether v accepts version.
func (v Versions) Match(version int64) bool { return v.Any() || slices.Contains(v, version) }

// expected is the version a one-shot write (a delete) must find: with
// versions given, the one read and matched, so that a change in between
// is refused; else 0, any.
func (v Versions) expected(read int64) int64 {
	if v.Any() {
		return 0
	}
	return read
}

// maxRetries is how many times a change without versions is made again on
// the new state after a concurrent writer won.
const maxRetries = 3
