package violation

import "github.com/jaxxstorm/landlord/internal/wire"

// Quote quotes a value for a violation's message as %q does, cut after
// 64 bytes (at a character boundary) and marked with its length, so that a
// message about a value never repeats a long one whole. It words values as
// landlord's API does.
func Quote(s string) string { return wire.Quote(s) }
