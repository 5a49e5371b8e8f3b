package jsonscan_test

import (
	"testing"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
)

func TestIsNull(t *testing.T) {
	for raw, want := range map[string]bool{"": true, "null": true, " null\n": true, "{}": false, `"null"`: false, "0": false, "nullx": false} {
		if got := jsonscan.IsNull([]byte(raw)); got != want {
			t.Errorf("IsNull(%q) = %v, want %v", raw, got, want)
		}
	}
}
