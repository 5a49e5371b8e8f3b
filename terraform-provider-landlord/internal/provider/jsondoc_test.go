package provider

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/jaxxstorm/landlord/client"
)

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func TestJSONEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[1,2]}`, `{ "b": [1, 2], "a": 1.0 }`, true},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{`{"a":"1"}`, `{"a":1}`, false},
		{`{"a":1e2}`, `{"a":100}`, true},
		{`{}`, `[]`, false},
	} {
		if got := jsonEqual(mustDecode(t, c.a), mustDecode(t, c.b)); got != c.want {
			t.Errorf("jsonEqual(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestMergeDiff(t *testing.T) {
	for _, c := range []struct {
		cur, want, patch string
		changed          bool
	}{
		{`{"image":"a","env":{"X":"1","Y":"2"}}`, `{"image":"a","env":{"X":"1","Y":"2"}}`, `{}`, false},
		{`{"image":"a","env":{"X":"1","Y":"2"}}`, `{"image":"b","env":{"X":"1"}}`, `{"image":"b","env":{"Y":null}}`, true},
		{`{"ports":[{"container_port":80}]}`, `{"ports":[{"container_port":81}]}`, `{"ports":[{"container_port":81}]}`, true},
		{`{"a":{"b":1}}`, `{"a":2}`, `{"a":2}`, true},
		{`{"a":1}`, `{}`, `{"a":null}`, true},
	} {
		cur, want := mustDecode(t, c.cur), mustDecode(t, c.want)
		patch, changed := mergeDiff(cur, want)
		if changed != c.changed || !jsonEqual(patch, mustDecode(t, c.patch)) {
			t.Errorf("mergeDiff(%s, %s) = %s, %v; want %s, %v", c.cur, c.want, encodeJSON(patch), changed, c.patch, c.changed)
		}
		// The patch, applied as landlord applies one, makes cur want.
		if got := mergePatch(cur, patch); !jsonEqual(got, want) {
			t.Errorf("%s merged with %s = %s, want %s", c.cur, encodeJSON(patch), encodeJSON(got), c.want)
		}
	}
}

func TestWithSecrets(t *testing.T) {
	config := mustDecode(t, `{"image":"a","sidecars":[{"name":"s","image":"b"}],"x~y":{}}`).(map[string]any)
	got, err := withSecrets(config, map[string]string{
		"/secrets/DB_PASSWORD":      "p1",
		"/sidecars/0/secrets/TOKEN": "p2",
		"/x~0y/a~1b":                "p3",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"image":"a","secrets":{"DB_PASSWORD":"p1"},"sidecars":[{"name":"s","image":"b","secrets":{"TOKEN":"p2"}}],"x~y":{"a/b":"p3"}}`
	if !jsonEqual(got, mustDecode(t, want)) {
		t.Errorf("withSecrets = %s, want %s", encodeJSON(got), want)
	}
	if _, ok := config["secrets"]; ok {
		t.Error("withSecrets changed the config it was given")
	}
	for _, bad := range []string{"secrets/X", "/sidecars/1/secrets/X", "/image/X", ""} {
		if _, err := withSecrets(config, map[string]string{bad: "v"}); err == nil {
			t.Errorf("withSecrets(%q) = nil error, want one", bad)
		}
	}
}

func TestRedactedSecrets(t *testing.T) {
	shown := mustDecode(t, `{"image":"a","secrets":{"A":"[redacted]"},"sidecars":[{"secrets":{"B":"[redacted]"},"env":{"C":"c"}}],"empty":{}}`)
	if got, want := redactedPointers(shown), []string{"/secrets/A", "/sidecars/0/secrets/B"}; !slices.Equal(got, want) {
		t.Errorf("redactedPointers = %v, want %v", got, want)
	}
	want := `{"image":"a","sidecars":[{"env":{"C":"c"}}],"empty":{}}`
	if got := withoutRedacted(shown); !jsonEqual(got, mustDecode(t, want)) {
		t.Errorf("withoutRedacted = %s, want %s", encodeJSON(got), want)
	}
	given := mustDecode(t, `{"image":"a","secrets":{"A":"in clear"},"sidecars":[{"secrets":{"B":"[redacted]"}}]}`)
	if got := clearSecrets(given, shown); !slices.Equal(got, []string{"/secrets/A"}) {
		t.Errorf("clearSecrets = %v, want [/secrets/A]", got)
	}
}

func TestDesiredPatch(t *testing.T) {
	cur := &client.Tenant{Name: "acme", ComputeConfig: []byte(`{"image":"a","env":{"X":"1"},"secrets":{"S":"[redacted]"}}`),
		Labels: map[string]string{"tier": "gold", "old": "x"}, Plan: &client.TenantPlan{Name: "std", Version: 3}}
	// Secrets left out are kept; labels removed are null; leaving the plan is null.
	d := &desired{config: mustDecode(t, `{"image":"b","env":{"X":"1"}}`).(map[string]any), labels: map[string]string{"tier": "gold"}}
	patch, err := d.patch(cur)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"compute_config":{"image":"b"},"labels":{"old":null},"plan":null}`
	if !jsonEqual(mustDecode(t, encodeJSON(patch)), mustDecode(t, want)) {
		t.Errorf("patch = %s, want %s", encodeJSON(patch), want)
	}
	// Secrets given are exactly the tenant's: one not named goes.
	d.secrets = map[string]string{"/secrets/T": "t"}
	d.config, _ = withSecrets(d.config, d.secrets)
	d.plan = &client.PlanChoice{Name: "std"}
	patch, _ = d.patch(cur)
	want = `{"compute_config":{"image":"b","secrets":{"S":null,"T":"t"}},"labels":{"old":null}}`
	if !jsonEqual(mustDecode(t, encodeJSON(patch)), mustDecode(t, want)) {
		t.Errorf("patch = %s, want %s", encodeJSON(patch), want)
	}
	// Nothing to change is no patch.
	same := &desired{config: mustDecode(t, `{"image":"a","env":{"X":"1"}}`).(map[string]any), labels: cur.Labels, plan: &client.PlanChoice{Name: "std"}}
	if patch, _ := same.patch(cur); patch != nil {
		t.Errorf("patch of an unchanged tenant = %s, want none", encodeJSON(patch))
	}
	// Pinning sends the version.
	same.plan = &client.PlanChoice{Name: "std", Version: 2, Pinned: true}
	if patch, _ := same.patch(cur); !jsonEqual(mustDecode(t, encodeJSON(patch)), mustDecode(t, `{"plan":{"name":"std","version":2,"pinned":true}}`)) {
		t.Errorf("patch of a pin = %s", encodeJSON(patch))
	}
}

func TestTenantAttribute(t *testing.T) {
	at := tenantAttribute(map[string]string{"/secrets/DB": "x"})
	for pointer, want := range map[string]path.Path{
		"/name":                           path.Root("name"),
		"/compute_config/image":           path.Root("compute_config"),
		"/compute_config/secrets/DB":      path.Root("secrets_wo").AtMapKey("/secrets/DB"),
		"/compute_config/secrets/DBX":     path.Root("compute_config"),
		"/labels/bad key":                 path.Root("labels").AtMapKey("bad key"),
		"/plan/version":                   path.Root("pin"),
		"/plan/name":                      path.Root("plan"),
		"/maintenance_window/days/1":      path.Root("maintenance_window").AtName("days").AtListIndex(1),
		"/maintenance_window/time_zone":   path.Root("maintenance_window").AtName("time_zone"),
		"/annotations/landlord.dev~1note": path.Root("annotations").AtMapKey("landlord.dev/note"),
	} {
		got, ok := at(pointer)
		if !ok || !got.Equal(want) {
			t.Errorf("tenantAttribute(%s) = %s, %v; want %s", pointer, got, ok, want)
		}
	}
	if _, ok := at("/placements/0"); ok {
		t.Error("tenantAttribute(/placements/0) found an attribute")
	}
}

func TestAddAPIError(t *testing.T) {
	err := &client.Error{Status: 422, Problem: client.Problem{Code: "invalid_compute_config", Detail: "compute_config is not valid for its provider",
		Errors: []client.FieldError{{Pointer: "/compute_config/image", Message: "minLength: got 0, want 1"}, {Pointer: "/placements", Message: "odd"}}}}
	var diags diag.Diagnostics
	addAPIError(&diags, "landlord refuses", err, tenantAttribute(nil))
	if len(diags) != 2 {
		t.Fatalf("diagnostics = %v, want 2", diags)
	}
	first, ok := diags[0].(diag.DiagnosticWithPath)
	if !ok || !first.Path().Equal(path.Root("compute_config")) || !strings.Contains(first.Detail(), "/compute_config/image: minLength") {
		t.Errorf("first diagnostic = %v, want one at compute_config naming /compute_config/image", diags[0])
	}
	if !strings.Contains(diags[1].Detail(), "/placements: odd") {
		t.Errorf("second diagnostic = %q, want the unmapped field", diags[1].Detail())
	}
	diags = nil
	addAPIError(&diags, "landlord refuses", errors.New("dial tcp: refused"), tenantAttribute(nil))
	if len(diags) != 1 || diags[0].Detail() != "dial tcp: refused" {
		t.Errorf("diagnostics of a plain error = %v", diags)
	}
}

func TestKeptSecrets(t *testing.T) {
	shown := mustDecode(t, `{"image":"a","secrets":{"DB":"[redacted]"},"sidecars":[{"name":"s0","secrets":{"T":"[redacted]"}},{"name":"s1","secrets":{"U":"[redacted]"}}]}`).(map[string]any)
	// The config drops sidecar s1: its secret goes, the others stay.
	config := mustDecode(t, `{"image":"b","sidecars":[{"name":"s0"}]}`).(map[string]any)
	want := `{"image":"b","secrets":{"DB":"[redacted]"},"sidecars":[{"name":"s0","secrets":{"T":"[redacted]"}}]}`
	if got := keptSecrets(config, shown); !jsonEqual(got, mustDecode(t, want)) {
		t.Errorf("keptSecrets = %s, want %s", encodeJSON(got), want)
	}
	if _, ok := config["secrets"]; ok {
		t.Error("keptSecrets changed the config it was given")
	}
	// The config drops every sidecar: no sidecars array is made again.
	config = mustDecode(t, `{"image":"b"}`).(map[string]any)
	want = `{"image":"b","secrets":{"DB":"[redacted]"}}`
	if got := keptSecrets(config, shown); !jsonEqual(got, mustDecode(t, want)) {
		t.Errorf("keptSecrets without sidecars = %s, want %s", encodeJSON(got), want)
	}
	if got := nullPointers(mustDecode(t, `{"a":null,"b":[1,null],"c":{"d":null}}`)); !slices.Equal(got, []string{"/a", "/b/1", "/c/d"}) {
		t.Errorf("nullPointers = %v", got)
	}
}

func TestPatchKeepsOperatorAnnotations(t *testing.T) {
	cur := &client.Tenant{Name: "acme", ComputeConfig: []byte(`{"image":"a"}`),
		Annotations: map[string]string{"landlord.io/paused": "true", "owner": "x", "note": "old"}}
	d := &desired{config: mustDecode(t, `{"image":"a"}`).(map[string]any), annotations: map[string]string{"owner": "y"}}
	patch, _ := d.patch(cur)
	want := `{"annotations":{"owner":"y","note":null}}`
	if !jsonEqual(mustDecode(t, encodeJSON(patch)), mustDecode(t, want)) {
		t.Errorf("patch = %s, want %s: the pause stays, undeclared annotations of the user go", encodeJSON(patch), want)
	}
}
