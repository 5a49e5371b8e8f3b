package fleet_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/fleet"
)

func TestVersionConfig(t *testing.T) {
	for _, tt := range []struct {
		name, config, message, want string
		invalid                     bool
	}{
		{name: "compacted", config: "{ \"image\" : \"a\" }", want: `{"image":"a"}`},
		{name: "a backslash and u0000 is no NUL", config: `{"note":"\\u0000"}`, want: `{"note":"\\u0000"}`},
		{name: "a NUL", config: `{"note":"a\u0000"}`, invalid: true},
		{name: "not an object", config: `[1]`, invalid: true},
		{name: "not JSON", config: `{`, invalid: true},
		{name: "a message too long", config: `{}`, message: strings.Repeat("m", fleet.MaxDescription+1), invalid: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fleet.VersionConfig(json.RawMessage(tt.config), tt.message)
			if tt.invalid {
				if !errors.Is(err, fleet.ErrInvalid) {
					t.Errorf("VersionConfig(%s) = %s, %v; want fleet.ErrInvalid", tt.config, got, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("VersionConfig(%s) = %s, %v; want %s", tt.config, got, err, tt.want)
			}
		})
	}
}
