package jsonscan_test

import (
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
)

func TestInvalidText(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		pointer   string // with ok false: no offence
		ok        bool
		message   string
	}{
		{name: "text", doc: `{"a":"café ✓ 🚀","b":["x"],"c":{"d":"\u00e9"}}`},
		{name: "a surrogate pair", doc: `{"a":"\ud83d\ude80","b":"\uD83D\uDE80"}`},
		{name: "an escaped backslash before u", doc: `{"a":"\\ud800"}`},
		{name: "a byte that is not UTF-8", doc: "{\"a\":\"ok\",\"b\":\"caf\xe9\"}", ok: true, pointer: "/b", message: "is not valid UTF-8"},
		{name: "a truncated sequence", doc: "{\"a\":{\"b\":[1,\"\xc3\"]}}", ok: true, pointer: "/a/b/1"},
		{name: "a key", doc: "{\"a\":{\"k\xff\":1}}", ok: true, pointer: "/a", message: "has a key that is not valid UTF-8"},
		{name: "a high half alone", doc: `{"a":"x\ud800y"}`, ok: true, pointer: "/a", message: `holds \ud800, half of a UTF-16 surrogate pair, which is no character`},
		{name: "a low half alone", doc: `{"a":"\uDFFF"}`, ok: true, pointer: "/a", message: `holds \udfff, half of a UTF-16 surrogate pair, which is no character`},
		{name: "two high halves", doc: `{"a":"\ud800\ud800"}`, ok: true, pointer: "/a"},
		{name: "a high half at the end", doc: `["ok","\ud83d"]`, ok: true, pointer: "/1"},
		{name: "a half in a key", doc: `{"a":1,"\udc00":2}`, ok: true, pointer: "", message: `has a key that holds \udc00, half of a UTF-16 surrogate pair, which is no character`},
		{name: "a scalar document", doc: "\"\xff\"", ok: true, pointer: ""},
		{name: "outside a string", doc: "{\"a\":\xff}", ok: true, pointer: "/a", message: "is not valid UTF-8"},
		{name: "malformed, but text", doc: `{"a":"\ud800`},
		{name: "the first in the text wins", doc: "{\"z\":\"\xff\",\"a\":\"\\ud800\"}", ok: true, pointer: "/z"},
		{name: "after a long valid document", doc: `{"a":"` + strings.Repeat("x", 100000) + `","b":"` + "\xff" + `"}`, ok: true, pointer: "/b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := jsonscan.InvalidText([]byte(tt.doc))
			if ok != tt.ok || v.Pointer != tt.pointer {
				t.Fatalf("InvalidText = %+v, %v; want pointer %q, %v", v, ok, tt.pointer, tt.ok)
			}
			if tt.message != "" && v.Message != tt.message {
				t.Errorf("message = %q, want %q", v.Message, tt.message)
			}
		})
	}
}

// BenchmarkInvalidTextValid is the cost of the check to a body of valid
// text, which every request body pays: it is not decoded.
func BenchmarkInvalidTextValid(b *testing.B) {
	doc := []byte(`{"name":"acme","compute_config":{"image":"example.com/app:1","env":{"A":"` + strings.Repeat("café ", 2000) + `"}}}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, bad := jsonscan.InvalidText(doc); bad {
			b.Fatal("valid text refused")
		}
	}
}
