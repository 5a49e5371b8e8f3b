package wire

import (
	"slices"
	"testing"
	"time"
)

// TestWindowDays: WindowDay indexes the days by time.Weekday.
func TestWindowDays(t *testing.T) {
	if got := slices.Index(weekdays[:], "wed"); got != int(time.Wednesday) {
		t.Errorf("weekdays are not in time.Weekday order: wed at %d", got)
	}
}

// TestIsID: a tenant id is a UUID's 36-character text form, in either
// case; nothing else is.
func TestIsID(t *testing.T) {
	for _, tt := range []struct {
		s  string
		ok bool
	}{
		{"0190b5d2-7c4e-7a3b-9f1e-2d3c4b5a6978", true},
		{"0190B5D2-7C4E-7A3B-9F1E-2D3C4B5A6978", true},
		{"0190b5d2-7c4e-7a3b-9f1e-2d3c4b5a697", false},
		{"0190b5d2-7c4e-7a3b-9f1e-2d3c4b5a6978a", false},
		{"0190b5d2x7c4e-7a3b-9f1e-2d3c4b5a6978", false},
		{"0190b5d2-7c4e-7a3b-9f1e-2d3c4b5a697g", false},
		{"{0190b5d2-7c4e-7a3b-9f1e-2d3c4b5a69}", false},
		{"acme", false},
		{"", false},
	} {
		t.Run(tt.s, func(t *testing.T) {
			if got := IsID(tt.s); got != tt.ok {
				t.Errorf("IsID(%q) = %v, want %v", tt.s, got, tt.ok)
			}
		})
	}
}
