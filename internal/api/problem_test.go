package api

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// TestProblemTableDocumented: docs/api.md lists problemTable as it is.
func TestProblemTableDocumented(t *testing.T) {
	const path = "../../docs/api.md"
	const begin, end = "<!-- problem-table:begin -->\n", "<!-- problem-table:end -->"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("%s has no section between %q and %q", path, begin, end)
	}
	var b strings.Builder
	b.WriteString("| error | status | code | detail |\n| --- | --- | --- | --- |\n")
	for _, row := range problemTable {
		detail := row.detail
		if detail == "" {
			detail = "the error's own message"
		}
		fmt.Fprintf(&b, "| `%s` | %d | `%s` | %s |\n", row.name, row.status, row.code, detail)
	}
	want := b.String()
	if got := string(doc[i+len(begin) : j]); got != want {
		if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" { // openapi_test.go defines -update
			out := string(doc[:i+len(begin)]) + want + string(doc[j:])
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s lists another problem table; run go test ./internal/api -run TestProblemTableDocumented -update\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestProblemMappingIgnoresRowOrder: every sentinel, however wrapped, maps
// to its own row, whatever the order of the table; an error that wraps two
// sentinels maps to the outer one.
func TestProblemMappingIgnoresRowOrder(t *testing.T) {
	cases := map[string]struct {
		err  error
		code string
	}{
		"tenant rules":             {violation.New(tenant.ErrInvalid, "/name", "bad"), wire.CodeInvalidBody},
		"compute config":           {provider.Invalid("/image", "is required"), wire.CodeInvalidComputeConfig},
		"wrapped tenant rules":     {fmt.Errorf("store: %w", violation.New(tenant.ErrInvalid, "/labels/x", "bad")), wire.CodeInvalidBody},
		"provider not found":       {&compute.ProviderNotFoundError{Name: "nomad"}, wire.CodeProviderNotFound},
		"upstream over provision":  {fmt.Errorf("%w: docker: %w", errUpstream, provider.ErrProvisionFailed), wire.CodeUnavailable},
		"name taken":               {fmt.Errorf("sqlite: %w", tenant.ErrNameTaken), wire.CodeNameTaken},
		"workload missing":         {fmt.Errorf("mock: %w", provider.ErrTenantNotFound), wire.CodeWorkloadNotFound},
		"conflict inside a joined": {errors.Join(errors.New("first"), tenant.ErrConflict), wire.CodeVersionConflict},
	}
	for _, row := range problemTable {
		cases["bare "+row.name] = struct {
			err  error
			code string
		}{fmt.Errorf("wrapped: %w", row.err), row.code}
	}
	defer func(rows map[error]*problemRow) { problemRows = rows }(problemRows)
	for _, order := range []string{"as written", "reversed"} {
		if order == "reversed" {
			reversed := slices.Clone(problemTable)
			slices.Reverse(reversed)
			problemRows = indexProblems(reversed)
		}
		for name, c := range cases {
			p := problemFor(c.err)
			if p == nil || p.Code != c.code {
				t.Errorf("%s, table %s: problemFor(%v) = %v, want code %s", name, order, c.err, p, c.code)
			}
		}
	}
	if p := problemFor(violation.New(tenant.ErrInvalid, "/name", "bad")); p.Status != http.StatusBadRequest || p.Errors[0].Pointer != "/name" {
		t.Errorf("tenant rules: %+v, want a 400 naming /name", p)
	}
	if p := problemFor(provider.Invalid("/image", "is required")); p.Status != http.StatusUnprocessableEntity || p.Errors[0].Pointer != "/compute_config/image" {
		t.Errorf("compute config: %+v, want a 422 naming /compute_config/image", p)
	}
	if p := problemFor(errors.New("unmapped")); p != nil {
		t.Errorf("an unmapped error = %+v, want nil (a 500)", p)
	}
}

// TestUpstreamDetail: a provider failure keeps its cause in the detail, on
// one line and bounded.
func TestUpstreamDetail(t *testing.T) {
	cause := errors.New("dial unix /var/run/docker.sock: connect:\n\tconnection refused " + strings.Repeat("x", 1000))
	p := problemFor(fmt.Errorf("%w: docker: %w", errUpstream, cause))
	if p.Status != http.StatusBadGateway || p.Code != wire.CodeUnavailable {
		t.Fatalf("problem = %d %s, want 502 %s", p.Status, p.Code, wire.CodeUnavailable)
	}
	if !strings.Contains(p.Detail, "docker: dial unix /var/run/docker.sock: connect: connection refused x") {
		t.Errorf("detail %q does not keep the cause", p.Detail)
	}
	if strings.ContainsAny(p.Detail, "\n\t") || len([]rune(p.Detail)) > 400 {
		t.Errorf("detail is not one bounded line (%d characters): %q", len([]rune(p.Detail)), p.Detail)
	}
}
