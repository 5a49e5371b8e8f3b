package wire_test

import (
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// Quote repeats a short value as %q does, and at most MaxQuoted bytes of a
// long one, never cutting a character in two.
func TestQuote(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"acme", `"acme"`},
		{strings.Repeat("a", 64), `"` + strings.Repeat("a", 64) + `"`},
		{strings.Repeat("a", 900<<10), `"` + strings.Repeat("a", 64) + `"… (921600 bytes)`},
		{strings.Repeat("a", 63) + "é", `"` + strings.Repeat("a", 63) + `"… (65 bytes)`},
	} {
		if got := wire.Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%.80q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
