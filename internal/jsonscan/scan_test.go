package jsonscan_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
)

func TestCheck(t *testing.T) {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	for _, tt := range []struct {
		name, doc string
		pointer   string // "" with ok false: no offence
		ok        bool
		message   string
	}{
		{name: "flat", doc: `{"a":1,"b":[1,2,{"c":null}]}`},
		{name: "64 deep", doc: nest(`{"a":`, `}`, 64)},
		{name: "65 deep", doc: nest(`{"a":`, `}`, 65), ok: true, pointer: "/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a", message: "nests deeper than 64 levels of objects and arrays"},
		{name: "arrays 9990 deep", doc: nest(`[`, `]`, 9990), ok: true, pointer: strings.Repeat("/0", 64)},
		{name: "deep after siblings", doc: `{"a":[1,2,` + nest(`[`, `]`, 70) + `]}`, ok: true, pointer: "/a/2" + strings.Repeat("/0", 62)},
		{name: "duplicate at the top", doc: `{"name":"a","labels":{},"name":"b"}`, ok: true, pointer: "/name", message: "repeats a key of its object; an object may have each key once"},
		{name: "duplicate nested", doc: `{"compute_config":{"ports":[{"container_port":1},{"container_port":1,"container_port":2}]}}`, ok: true, pointer: "/compute_config/ports/1/container_port"},
		{name: "duplicate spelled with an escape", doc: `{"a":1,"\u0061":2}`, ok: true, pointer: "/a"},
		{name: "duplicate key with a slash", doc: `{"a/b":1,"c":2,"a/b":3}`, ok: true, pointer: "/a~1b"},
		{name: "a key of 512 bytes", doc: `{"labels":{"` + strings.Repeat("k", 512) + `":"v"}}`},
		{name: "a key of 513 bytes", doc: `{"labels":{"a":"v","` + strings.Repeat("k", 513) + `":"v"}}`, ok: true, pointer: "/labels", message: "has a key of 513 bytes; keys are at most 512"},
		{name: "a long key at the top", doc: `{"` + strings.Repeat("k", 900<<10) + `":1}`, ok: true, pointer: ""},
		{name: "same key in sibling objects", doc: `[{"a":1},{"a":1}]`},
		{name: "first offence wins", doc: `{"a":1,"a":2,"b":` + nest(`[`, `]`, 100) + `}`, ok: true, pointer: "/a"},
		{name: "malformed", doc: `{"a":1,"b"`},
		{name: "offence before a syntax error", doc: `{"a":1,"a"`, ok: true, pointer: "/a"},
		{name: "malformed before the offence", doc: `{"a":1,}"a":2}`},
		{name: "trailing data is not read", doc: `{"a":1}{"a":1,"a":2}`},
		{name: "scalar", doc: `"x"`},
		{name: "empty", doc: ``},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := jsonscan.Check([]byte(tt.doc), jsonscan.MaxDepth)
			if ok != tt.ok || v.Pointer != tt.pointer {
				t.Fatalf("Check = %+v, %v; want pointer %q, %v", v, ok, tt.pointer, tt.ok)
			}
			if tt.message != "" && v.Message != tt.message {
				t.Errorf("message = %q, want %q", v.Message, tt.message)
			}
		})
	}
}

type port struct {
	ContainerPort int `json:"container_port"`
}

type container struct {
	Name  string `json:"name"`
	Ports []port `json:"ports"`
}

type config struct {
	container
	Sidecars []container      `json:"sidecars"`
	Env      map[string]int   `json:"env"`
	Any      map[string][]int `json:"any"`
}

// TestPointerAt holds PointerAt to the offsets encoding/json reports.
func TestPointerAt(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{`{"ports":[{"container_port":1e30}]}`, "/ports/0/container_port"},
		{`{"sidecars":[{}, {"ports":[{"container_port":1}, {"container_port": 1.5}]}]}`, "/sidecars/1/ports/1/container_port"},
		{`{"name": 5}`, "/name"},
		{`{"name": {"a": [1, 2]}}`, "/name"},
		{`{"name": [1, 2]}`, "/name"},
		{`{"env": {"a/b": 1, "c~d": "x"}}`, "/env/c~0d"},
		{`{"any": {"k": [1, 2, "three"]}}`, "/any/k/2"},
		{`{"any": {"k": [1, 2, {"x": 1}]}}`, "/any/k/2"},
		{`{"ports": "none"}`, "/ports"},
		{`{"name":"a","ports":[{"container_port":"80"}]}`, "/ports/0/container_port"},
	} {
		var c config
		err := json.Unmarshal([]byte(tt.doc), &c)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			t.Fatalf("%s: Unmarshal = %v, want a type error", tt.doc, err)
		}
		if got := jsonscan.PointerAt([]byte(tt.doc), te.Offset); got != tt.want {
			t.Errorf("%s: PointerAt(%d) = %q, want %q", tt.doc, te.Offset, got, tt.want)
		}
	}
}

// BenchmarkCheck measures the pass every request body gets: a typical
// create body, and the hostile 20 KB body nested 9,990 deep that is refused
// at level 65.
func BenchmarkCheck(b *testing.B) {
	for _, bb := range []struct{ name, doc string }{
		{"create", `{"name":"acme","compute_config":{"image":"ghcr.io/example/app:1.4","ports":[{"container_port":8080}],"env":{"A":"1","B":"2"},"secrets":{"S":"x"}},"labels":{"tier":"gold"}}`},
		{"nested_20KB", `{"name":"a","compute_config":{"x-a":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}}`},
	} {
		b.Run(bb.name, func(b *testing.B) {
			doc := []byte(bb.doc)
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				jsonscan.Check(doc, jsonscan.MaxDepth)
			}
		})
	}
}
