package ui

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
)

func mockSchema(t *testing.T) *node {
	t.Helper()
	p, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := parseSchema(p.ConfigSchema())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// submit fills in a form as a browser sends it: each input under its name,
// with the value the page shows in it.
func submit(f *field, form url.Values) {
	switch f.Kind {
	case "object", "list":
		for _, c := range append(f.Children, f.Items...) {
			submit(c, form)
		}
	case "map":
		for _, r := range f.Rows {
			form.Add(f.Pointer+keySuffix, r.Key)
			form.Add(f.Pointer+valueSuffix, r.Value)
		}
	case "select":
		for _, o := range f.Options {
			if o.Selected {
				form.Set(f.Pointer, o.Value)
			}
		}
	default:
		form.Set(f.Pointer, f.Value)
	}
}

// A config the form can show comes back from it as it went in: what the
// form renders and what it reads agree, field by field.
func TestFormRoundTrip(t *testing.T) {
	schema := mockSchema(t)
	for _, config := range []string{
		`{"image":"nginx:1.27"}`,
		`{"image":"a","args":["--port","8080"],"env":{"A":"1","B":"two words"},"secrets":{"K":"[redacted]"},` +
			`"ports":[{"container_port":80,"protocol":"udp"},{"container_port":443,"host_port":8443,"name":"https"}],` +
			`"health_check":{"http":{"port":80,"path":"/healthz"},"interval":"5s","retries":3},` +
			`"resources":{"cpu_millicores":500,"memory_mib":256},"networking":{"public":true},` +
			`"sidecars":[{"name":"log","image":"busybox","command":["tail","-f"],"env":{"X":"y"}}],` +
			`"x-mock":{"latency":"1s","listen":true,"fail_times":2}}`,
	} {
		value, err := decodeOrdered([]byte(config))
		if err != nil {
			t.Fatal(err)
		}
		if bad := unrepresentable(schema, "/compute_config", value); bad != nil {
			t.Fatalf("%s: the form cannot show %v", config, bad)
		}
		f := fields(schema, "compute_config", "/compute_config", true, value, nil)
		form := url.Values{}
		submit(f, form)
		kept := &secretInputs{kept: map[string]bool{}}
		for _, p := range setSecrets([]byte(config)) {
			kept.kept[p] = true
		}
		got, ok := decode(schema, "/compute_config", form, kept)
		if !ok {
			t.Fatalf("%s: nothing read back", config)
		}
		if !sameJSON(t, mustJSON(got), config) {
			t.Errorf("round trip of\n%s\ngave\n%s", config, mustJSON(got))
		}
	}
}

func sameJSON(t *testing.T, a []byte, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		t.Fatalf("not JSON: %s or %s", a, b)
	}
	return string(mustJSON(x)) == string(mustJSON(y))
}

// What the form cannot show is found, so that the tenant is edited as JSON
// instead of losing it.
func TestUnrepresentable(t *testing.T) {
	schema := mockSchema(t)
	for config, want := range map[string]string{
		`{"image":"a","x-extra":{"k":1}}`:        "/compute_config/x-extra",
		`{"image":"a","args":["two\nlines"]}`:    "/compute_config/args",
		`{"image":"a","args":[""]}`:              "/compute_config/args",
		`{"image":["not","a","string"]}`:         "/compute_config/image",
		`{"image":"a","env":{"A":{"nested":1}}}`: "/compute_config/env/A",
		`{"image":"a","ports":[{"bogus":1}]}`:    "/compute_config/ports/0/bogus",
		`{"image":"a","sidecars":[{"x-y":[1]}]}`: "/compute_config/sidecars/0/x-y",
	} {
		v, _ := decodeOrdered([]byte(config))
		if got := strings.Join(unrepresentable(schema, "/compute_config", v), ","); got != want {
			t.Errorf("%s: %q, want %q", config, got, want)
		}
	}
}

// Numbers, booleans and enums are sent typed when they read as such, and
// as the text typed otherwise, for the API to judge.
func TestDecodeSendsWhatWasTyped(t *testing.T) {
	schema := mockSchema(t)
	form := url.Values{"/compute_config/image": {" nginx "}, "/compute_config/ports/0/container_port": {"eighty"},
		"/compute_config/ports/3/container_port": {"8e1"}, "/compute_config/networking/public": {"true"}}
	got, _ := decode(schema, "/compute_config", form, nil)
	want := `{"image":"nginx","ports":[{"container_port":"eighty"},{"container_port":8e1}],"networking":{"public":true}}` // the schema's order
	if string(mustJSON(got)) != want {
		t.Errorf("got %s, want %s", mustJSON(got), want)
	}
}

func TestEditAddsAndRemovesItems(t *testing.T) {
	body := object{{Key: "compute_config", Value: object{{Key: "ports", Value: []any{object{{Key: "container_port", Value: json.Number("1")}}, object{{Key: "container_port", Value: json.Number("2")}}}}}}}
	for _, tc := range []struct{ action, want string }{
		{"add:/compute_config/ports", `{"compute_config":{"ports":[{"container_port":1},{"container_port":2},{}]}}`},
		{"remove:/compute_config/ports/0", `{"compute_config":{"ports":[{"container_port":2}]}}`},
		{"add:/compute_config/sidecars", `{"compute_config":{"ports":[{"container_port":1},{"container_port":2}],"sidecars":[{}]}}`},
		{"add:/compute_config/sidecars/0/ports", `{"compute_config":{"ports":[{"container_port":1},{"container_port":2}]}}`},
		{"remove:/compute_config/ports/9", `{"compute_config":{"ports":[{"container_port":1},{"container_port":2}]}}`},
		{"more:/compute_config/env", `{"compute_config":{"ports":[{"container_port":1},{"container_port":2}]}}`},
	} {
		if got := string(mustJSON(edit(body, tc.action))); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.action, got, tc.want)
		}
	}
}

// A problem lands at the field its pointer names, or the nearest above it;
// one no field holds is returned.
func TestPlace(t *testing.T) {
	schema := mockSchema(t)
	v, _ := decodeOrdered([]byte(`{"image":"a","env":{"1BAD":"x"},"ports":[{"container_port":1}]}`))
	root := &field{Children: []*field{fields(schema, "compute_config", "/compute_config", true, v, nil)}}
	rest := place(root, []fieldProblem{
		{"/compute_config/image", "bad image"},
		{"/compute_config/env/1BAD", "bad name"},
		{"/compute_config/ports/0/container_port", "too small"},
		{"/compute_config/x-nope", "unknown field"},
		{"/labels/a", "bad label"},
	})
	find := func(ptr string) *field {
		var out *field
		var walk func(f *field)
		walk = func(f *field) {
			if f.Pointer == ptr {
				out = f
			}
			for _, c := range append(f.Children, f.Items...) {
				walk(c)
			}
		}
		walk(root)
		return out
	}
	for ptr, want := range map[string]string{
		"/compute_config/image":                  "bad image",
		"/compute_config/env":                    "1BAD: bad name",
		"/compute_config/ports/0/container_port": "too small",
		"/compute_config":                        "x-nope: unknown field",
	} {
		if f := find(ptr); f == nil || len(f.Errors) != 1 || f.Errors[0] != want {
			t.Errorf("%s: %v, want %q", ptr, f, want)
		}
	}
	if len(rest) != 1 || rest[0].Pointer != "/labels/a" {
		t.Errorf("left over: %v", rest)
	}
}

// A secret is never put back in a page: a stored one is kept by an empty
// input, and one typed before the form came back is carried sealed.
func TestSecretInputs(t *testing.T) {
	schema := mockSchema(t)
	value, _ := decodeOrdered([]byte(`{"image":"a","secrets":{"OLD":"[redacted]","NEW":"typed-secret"}}`))
	f := fields(schema, "compute_config", "/compute_config", true, value, nil)
	form := url.Values{}
	submit(f, form)
	for _, v := range form["/compute_config/secrets#value"] {
		if v != "" {
			t.Fatalf("a secret input holds %q", v)
		}
	}
	typed := map[string]string{}
	typedSecrets(schema, "/compute_config", value, typed)
	if len(typed) != 1 || typed["/compute_config/secrets/NEW"] != "typed-secret" {
		t.Fatalf("typed secrets: %v", typed)
	}
	in := &secretInputs{kept: map[string]bool{"/compute_config/secrets/OLD": true}, carried: typed}
	got, _ := decode(schema, "/compute_config", form, in)
	if want := `{"image":"a","secrets":{"OLD":"[redacted]","NEW":"typed-secret"}}`; string(mustJSON(got)) != want {
		t.Errorf("got %s, want %s", mustJSON(got), want)
	}
	// Without what the server knows, an empty input is an empty secret,
	// which the API judges: never a secret the form made up.
	got, _ = decode(schema, "/compute_config", form, nil)
	if want := `{"image":"a","secrets":{"OLD":"","NEW":""}}`; string(mustJSON(got)) != want {
		t.Errorf("got %s, want %s", mustJSON(got), want)
	}
}
