package wire

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxQuoted is how much of a value Quote repeats.
const MaxQuoted = 64

// Quote quotes s for a message, as %q does, cut after MaxQuoted bytes (at a
// character boundary) and marked with its length, so that a message about
// a value never repeats a long one whole.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	cut := MaxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
