package jsonscan_test

import (
	"testing"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
)

func TestNULAt(t *testing.T) {
	for _, tt := range []struct{ name, raw, want string }{
		{"none", `{"a":"b","c":[1,"d"]}`, ""},
		{"an escaped backslash before u0000 is no NUL", `{"a":"\\u0000"}`, ""},
		{"in a string", `{"a":{"b":"x\u0000y"}}`, "/config/a/b"},
		{"in an array", `{"args":["ok","\u0000"]}`, "/config/args/1"},
		{"in a key: the object that holds it", `{"a":{"k\u0000":1}}`, "/config/a"},
		{"the first by key order", `{"z":"\u0000","a/b":"\u0000"}`, "/config/a~1b"},
		{"not JSON", `{"a":"\u0000"`, "/config"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonscan.NULAt([]byte(tt.raw), "/config"); got != tt.want {
				t.Errorf("NULAt(%s) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}
