package openapi

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// mustOperation describes o with a new generator, which it returns too.
func mustOperation(t *testing.T, o Operation) (*openapi3.Operation, *schemaGenerator) {
	t.Helper()
	gen := newSchemaGenerator()
	op, err := operation(gen, o)
	if err != nil {
		t.Fatalf("operation %s: %v", o.ID, err)
	}
	return op, gen
}

func TestRequestBodyIsClosed(t *testing.T) {
	op, gen := mustOperation(t, Operation{Method: "POST", Pattern: "/v1/plans", ID: "createPlan", Access: Write,
		Request: wire.CreatePlanRequest{}, Response: wire.Plan{}, Status: http.StatusCreated})
	media := op.RequestBody.Value.Content
	if got := slices.Sorted(maps.Keys(media)); !slices.Equal(got, []string{"application/json"}) {
		t.Fatalf("request media types %v", got)
	}
	if !op.RequestBody.Value.Required {
		t.Error("the body is not required")
	}
	body := gen.component(media.Get("application/json").Schema)
	if has := body.AdditionalProperties.Has; has == nil || *has {
		t.Errorf("the request body allows unknown members: %v", has)
	}
	// A response body is not closed: a client should accept new members.
	if has := gen.schemas["Plan"].Value.AdditionalProperties.Has; has != nil {
		t.Errorf("the response body's additionalProperties is %v", *has)
	}
}

func TestMergePatchSchema(t *testing.T) {
	op, gen := mustOperation(t, Operation{Method: "PATCH", Pattern: "/v1/tenants/{tenant}", ID: "patchTenant", Access: Write,
		Parameters: []Parameter{{Name: "tenant", In: openapi3.ParameterInPath, Schema: openapi3.NewStringSchema()}},
		Request:    wire.ReplaceTenantRequest{}, MergePatch: true, Response: wire.Tenant{}, Status: http.StatusOK})
	content := op.RequestBody.Value.Content
	for _, mt := range []string{"application/merge-patch+json", "application/json"} {
		if m := content.Get(mt); m == nil || m.Schema.Ref != "#/components/schemas/ReplaceTenantRequestMergePatch" {
			t.Errorf("%s: %v, want the merge patch schema", mt, m)
		}
	}
	patch := gen.schemas["ReplaceTenantRequestMergePatch"].Value
	if len(patch.Required) != 0 {
		t.Errorf("a patch requires %v", patch.Required)
	}
	if has := patch.AdditionalProperties.Has; has == nil || *has {
		t.Errorf("the patch allows unknown members: %v", has)
	}
	// A member the body may leave out may be null, which removes it; one it
	// must send is as in the body.
	if types := patch.Properties["labels"].Value.Type; !types.Includes(openapi3.TypeNull) {
		t.Errorf("labels: type %v, want null allowed", types)
	}
	if plan := patch.Properties["plan"].Value; len(plan.AnyOf) != 2 || plan.AnyOf[0].Ref != "#/components/schemas/PlanChoice" {
		t.Errorf("plan: %+v, want PlanChoice or null", plan)
	}
	// A body sends compute_config or placements, so each may be left out.
	for _, member := range []string{"compute_config", "placements"} {
		if types := patch.Properties[member].Value.Type; !types.Includes(openapi3.TypeNull) {
			t.Errorf("%s: type %v, want null allowed", member, types)
		}
	}
	if body := gen.schemas["ReplaceTenantRequest"].Value; len(body.Required) != 0 {
		t.Errorf("a replace requires %v; it sends compute_config or placements", body.Required)
	}
}

func TestSchemaNotes(t *testing.T) {
	gen := newSchemaGenerator()
	if _, err := gen.ref(wire.Tenant{}); err != nil {
		t.Fatal(err)
	}
	tenant := gen.schemas["Tenant"].Value
	if tenant.Description != typeNotes[tenantType] {
		t.Errorf("Tenant: description %q", tenant.Description)
	}
	status := tenant.Properties["status"].Value
	if status.Description == "" || len(status.Enum) != len(wire.TenantStatuses) {
		t.Errorf("status: %q, enum %v", status.Description, status.Enum)
	}
	if !slices.Contains(tenant.Required, "id") || slices.Contains(tenant.Required, "deleted_at") {
		t.Errorf("required %v: want the members always sent, not those omitted when empty", tenant.Required)
	}
	// A pointer left out when nil is never null.
	if types := tenant.Properties["deleted_at"].Value.Type; types.Includes(openapi3.TypeNull) {
		t.Errorf("deleted_at: type %v", types)
	}
	if types := tenant.Properties["effective_config"].Value.Type; !types.Is(openapi3.TypeObject) {
		t.Errorf("effective_config: type %v, want object", types)
	}

	// The notes on what no generated schema has are stale.
	err := gen.unused()
	if err == nil || !strings.Contains(err.Error(), "wire.Rollout") || strings.Contains(err.Error(), "wire.Tenant,") {
		t.Errorf("unused: %v", err)
	}
}

func TestOperationProblems(t *testing.T) {
	op, _ := mustOperation(t, Operation{Method: "GET", Pattern: "/v1/tenants/{tenant}", ID: "getTenant", Access: Read,
		Parameters: []Parameter{
			{Name: "tenant", In: openapi3.ParameterInPath, Schema: openapi3.NewStringSchema(), Problems: map[int][]string{http.StatusNotFound: {"tenant_not_found"}}},
			{Name: "include_deleted", In: openapi3.ParameterInQuery, Schema: openapi3.NewBoolSchema(), Problems: map[int][]string{http.StatusBadRequest: {"invalid_parameter"}}},
		},
		Response: wire.Tenant{}, Status: http.StatusOK,
		Problems: map[int][]string{http.StatusBadRequest: {"invalid_parameter"}, http.StatusUnauthorized: {"unauthorized"}, http.StatusNotFound: {"not_found"}},
	})
	if got, want := op.Responses.Keys(), []string{"200", "400", "401", "404"}; !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Errorf("responses %v, want %v", got, want)
	}
	codes := func(status string) []any {
		return op.Responses.Value(status).Value.Content.Get("application/problem+json").Schema.Value.AllOf[1].Value.Properties["code"].Value.Enum
	}
	if diff := cmp.Diff([]any{"not_found", "tenant_not_found"}, codes("404")); diff != "" {
		t.Errorf("404 codes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"invalid_parameter"}, codes("400")); diff != "" {
		t.Errorf("400 codes, each once (-want +got):\n%s", diff)
	}
	if op.Responses.Value("401").Value.Headers["WWW-Authenticate"] == nil {
		t.Error("401 without WWW-Authenticate")
	}
	var names []string
	for _, p := range op.Parameters {
		if p.Value != nil {
			names = append(names, p.Value.In+" "+p.Value.Name)
			if p.Value.In == openapi3.ParameterInPath && !p.Value.Required {
				t.Errorf("path parameter %s is not required", p.Value.Name)
			}
		} else {
			names = append(names, p.Ref)
		}
	}
	if diff := cmp.Diff([]string{"path tenant", "query include_deleted", requestIDRef}, names); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	if op.Security != nil {
		t.Errorf("a read operation has its own security %v", *op.Security)
	}
	if op.Extensions["x-landlord-access"] != "read" || !strings.HasSuffix(op.Description, accessDoc[Read]) {
		t.Errorf("access: %v, description %q", op.Extensions["x-landlord-access"], op.Description)
	}
}

func TestBuildRefuses(t *testing.T) {
	ok := Operation{Method: "GET", Pattern: "/healthz", ID: "healthz", Access: Open, Response: wire.Health{}, Status: http.StatusOK}
	for _, tc := range []struct {
		name string
		ops  []Operation
		want string
	}{
		{"an operation id twice", []Operation{ok, ok}, "operation healthz is declared twice"},
		{"a path no tag covers", []Operation{{Method: "GET", Pattern: "/v2/things", ID: "things", Status: http.StatusOK}}, "no tag covers the path"},
		{"an undescribed path parameter", []Operation{{Method: "GET", Pattern: "/v1/tenants/{tenant}", ID: "getTenant", Status: http.StatusOK}}, "path parameter {tenant}"},
		{"a success that is a problem too", []Operation{{Method: "GET", Pattern: "/readyz", ID: "readyz", Status: http.StatusOK,
			Problems: map[int][]string{http.StatusOK: {"internal"}}}}, "response 200 is both a success and a problem"},
		{"a response twice", []Operation{{Method: "GET", Pattern: "/readyz", ID: "readyz", Status: http.StatusOK,
			Also: []Response{{Status: http.StatusOK}}}}, "response 200 is described twice"},
		{"a body that is no struct", []Operation{{Method: "GET", Pattern: "/readyz", ID: "readyz", Response: []string{}, Status: http.StatusOK}}, "a body must be a struct"},
		{"an unknown access", []Operation{{Method: "GET", Pattern: "/readyz", ID: "readyz", Access: Write + 1, Status: http.StatusOK}}, "access 3"},
		{"notes no body has", []Operation{ok}, "notes on types or fields that no body has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.ops)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Build: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
