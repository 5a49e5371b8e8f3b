package api

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// The API answers with wire types; the provider contract (compute) and the
// tenant domain have their own. These tests fail when the two sides drift
// apart, so that the client, which sees only the wire types, always decodes
// what the server sends.

// TestComputeStatusWire converts a provider.ComputeStatus with every field
// set, found by reflection so that a new field cannot be forgotten, and
// checks that the wire value has every field set too and encodes to the
// same JSON.
func TestComputeStatusWire(t *testing.T) {
	var full provider.ComputeStatus
	mustFill(t, reflect.ValueOf(&full).Elem(), "ComputeStatus")
	for name, st := range map[string]*provider.ComputeStatus{
		"full":  &full,
		"zero":  {},
		"empty": {Containers: []provider.ContainerStatus{}, Endpoints: []provider.Endpoint{}, Metadata: map[string]string{}},
	} {
		t.Run(name, func(t *testing.T) {
			got := computeStatus(st)
			if name == "full" {
				for _, path := range unset(reflect.ValueOf(*got), "ComputeStatus") {
					t.Errorf("%s is not set by computeStatus", path)
				}
			}
			assertSameJSON(t, st, got)
		})
	}
	if got := computeStatus(nil); got != nil {
		t.Errorf("computeStatus(nil) = %+v, want nil", got)
	}
}

// TestEndpointsWire does the same for the endpoints of a tenant.
func TestEndpointsWire(t *testing.T) {
	var full []provider.Endpoint
	mustFill(t, reflect.ValueOf(&full).Elem(), "Endpoints")
	got := endpoints(full)
	for _, path := range unset(reflect.ValueOf(got), "Endpoints") {
		t.Errorf("%s is not set by endpoints", path)
	}
	assertSameJSON(t, full, got)
	if got := endpoints(nil); got != nil {
		t.Errorf("endpoints(nil) = %v, want nil", got)
	}
	assertSameJSON(t, []provider.Endpoint{}, endpoints([]provider.Endpoint{}))
}

// TestComputeStatusShape holds the wire types to the compute types field by
// field: the same names, JSON tags and kinds, in the same order.
func TestComputeStatusShape(t *testing.T) {
	for _, tc := range []struct{ domain, wire reflect.Type }{
		{reflect.TypeFor[provider.ComputeStatus](), reflect.TypeFor[wire.ComputeStatus]()},
		{reflect.TypeFor[provider.Endpoint](), reflect.TypeFor[wire.Endpoint]()},
	} {
		for _, d := range shapeDiff(tc.domain, tc.wire, tc.wire.Name()) {
			t.Error(d)
		}
	}
}

// TestComputeEnumsWire checks that the wire has every value of compute's
// string enumerations under the same name, and no other. Constants are
// found in the source, as Go cannot list them at run time.
func TestComputeEnumsWire(t *testing.T) {
	types := []string{"ComputeState", "HealthStatus", "ContainerState", "Protocol"}
	domain := mustStringConsts(t, filepath.Join("..", "..", "sdk", "provider"), types)
	for typ, consts := range mustStringConsts(t, filepath.Join("..", "..", "sdk", "workload"), types) {
		domain[typ] = consts // Protocol is the portable workload's
	}
	wired := mustStringConsts(t, filepath.Join("..", "wire"), types)
	for _, typ := range types {
		if len(domain[typ]) == 0 {
			t.Errorf("no constants of provider.%s found; was it renamed? Update this test", typ)
		}
		if diff := cmp.Diff(domain[typ], wired[typ]); diff != "" {
			t.Errorf("wire's %s constants differ from compute's (-compute +wire):\n%s", typ, diff)
		}
	}
}

// TestTenantStatusesWire checks that the wire's tenant statuses are the
// tenant package's, in the same order.
func TestTenantStatusesWire(t *testing.T) {
	var want []string
	for _, s := range tenant.Statuses {
		want = append(want, string(s))
	}
	if diff := cmp.Diff(want, wire.TenantStatuses); diff != "" {
		t.Errorf("wire.TenantStatuses differs from tenant.Statuses (-tenant +wire):\n%s", diff)
	}
	named := map[tenant.Status]string{
		tenant.StatusRequested: wire.StatusRequested, tenant.StatusProvisioning: wire.StatusProvisioning,
		tenant.StatusReady: wire.StatusReady, tenant.StatusUpdating: wire.StatusUpdating,
		tenant.StatusDeleting: wire.StatusDeleting, tenant.StatusDeleted: wire.StatusDeleted,
		tenant.StatusFailed: wire.StatusFailed,
	}
	for s, w := range named {
		if string(s) != w {
			t.Errorf("wire status %q is tenant status %q", w, s)
		}
	}
	if len(named) != len(tenant.Statuses) {
		t.Errorf("this test names %d tenant statuses, the tenant package has %d", len(named), len(tenant.Statuses))
	}
}

// TestRolloutStatesWire checks that the wire's rollout and member states
// are the fleet package's.
func TestRolloutStatesWire(t *testing.T) {
	for s, w := range map[fleet.State]string{
		fleet.StateRunning: wire.RolloutRunning, fleet.StatePaused: wire.RolloutPaused, fleet.StateHalted: wire.RolloutHalted,
		fleet.StateAborting: wire.RolloutAborting, fleet.StateAborted: wire.RolloutAborted, fleet.StateCompleted: wire.RolloutCompleted,
	} {
		if string(s) != w {
			t.Errorf("wire rollout state %q is fleet state %q", w, s)
		}
	}
	for s, w := range map[fleet.MemberState]string{
		fleet.MemberPending: wire.MemberPending, fleet.MemberChanging: wire.MemberChanging, fleet.MemberDone: wire.MemberDone,
		fleet.MemberFailed: wire.MemberFailed, fleet.MemberSkipped: wire.MemberSkipped, fleet.MemberRolledBack: wire.MemberRolledBack,
	} {
		if string(s) != w {
			t.Errorf("wire member state %q is fleet member state %q", w, s)
		}
	}
}

func assertSameJSON(t *testing.T, domain, wired any) {
	t.Helper()
	want, err := json.Marshal(domain)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(wired)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("the wire form encodes differently:\n compute: %s\n    wire: %s", want, got)
	}
}

// mustFill sets every field reachable from v to a value that is not zero:
// two elements in each slice, one entry in each map. It fails on a kind it
// does not know, so that a new kind of field gets filled too.
func mustFill(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	n := 0
	var fill func(v reflect.Value, path string)
	fill = func(v reflect.Value, path string) {
		n++
		switch v.Kind() {
		case reflect.String:
			v.SetString(fmt.Sprintf("v%d", n))
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(int64(n))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v.SetUint(uint64(n))
		case reflect.Float32, reflect.Float64:
			v.SetFloat(float64(n) + 0.5)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), path)
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
			for i := range 2 {
				fill(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Map:
			v.Set(reflect.MakeMap(v.Type()))
			key := reflect.New(v.Type().Key()).Elem()
			fill(key, path+"[key]")
			val := reflect.New(v.Type().Elem()).Elem()
			fill(val, path+"[value]")
			v.SetMapIndex(key, val)
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[time.Time]() {
				v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, n, time.UTC)))
				return
			}
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					t.Fatalf("%s.%s: cannot fill an unexported field", path, f.Name)
				}
				fill(v.Field(i), path+"."+f.Name)
			}
		default:
			t.Fatalf("%s: cannot fill a %s; teach mustFill", path, v.Type())
		}
	}
	fill(v, path)
	if missed := unset(v, path); len(missed) > 0 {
		t.Fatalf("mustFill left fields unset: %s", strings.Join(missed, ", "))
	}
}

// unset lists the paths of the zero values reachable from v: fields,
// elements and map entries.
func unset(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		return unset(v.Elem(), path)
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		var out []string
		for i := range v.Len() {
			out = append(out, unset(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		var out []string
		for it := v.MapRange(); it.Next(); {
			out = append(out, unset(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()))...)
		}
		return out
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			if v.Interface().(time.Time).IsZero() {
				return []string{path}
			}
			return nil
		}
		var out []string
		for i := range v.NumField() {
			out = append(out, unset(v.Field(i), path+"."+v.Type().Field(i).Name)...)
		}
		return out
	}
	if v.IsZero() {
		return []string{path}
	}
	return nil
}

// shapeDiff describes how the wire type w differs from the domain type d:
// fields, their order, JSON tags and kinds, recursively.
func shapeDiff(d, w reflect.Type, path string) []string {
	if d.Kind() != w.Kind() {
		return []string{fmt.Sprintf("%s: %s in compute, %s in wire", path, d, w)}
	}
	switch d.Kind() {
	case reflect.Pointer, reflect.Slice:
		return shapeDiff(d.Elem(), w.Elem(), path+"[]")
	case reflect.Map:
		return append(shapeDiff(d.Key(), w.Key(), path+"[key]"), shapeDiff(d.Elem(), w.Elem(), path+"[value]")...)
	case reflect.Struct:
		if d.PkgPath() != reflect.TypeFor[provider.ComputeStatus]().PkgPath() {
			if d != w {
				return []string{fmt.Sprintf("%s: %s in compute, %s in wire", path, d, w)}
			}
			return nil
		}
		var out []string
		for i := range max(d.NumField(), w.NumField()) {
			switch {
			case i >= w.NumField():
				out = append(out, fmt.Sprintf("%s.%s: in compute, not in wire", path, d.Field(i).Name))
			case i >= d.NumField():
				out = append(out, fmt.Sprintf("%s.%s: in wire, not in compute", path, w.Field(i).Name))
			default:
				df, wf := d.Field(i), w.Field(i)
				if df.Name != wf.Name || df.Tag.Get("json") != wf.Tag.Get("json") {
					out = append(out, fmt.Sprintf("%s field %d: %s `%s` in compute, %s `%s` in wire", path, i, df.Name, df.Tag, wf.Name, wf.Tag))
					continue
				}
				out = append(out, shapeDiff(df.Type, wf.Type, path+"."+df.Name)...)
			}
		}
		return out
	}
	return nil
}

// mustStringConsts reads the Go files of dir (tests left out) and returns,
// for each of the named types, its constants' names and values.
func mustStringConsts(t *testing.T, dir string, types []string) map[string]map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, typ := range types {
		want[typ] = true
	}
	out := map[string]map[string]string{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					typ, lit := constType(vs.Type, vs.Values[i])
					if !want[typ] || lit == nil || lit.Kind != token.STRING {
						continue
					}
					value, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
					}
					if out[typ] == nil {
						out[typ] = map[string]string{}
					}
					out[typ][name.Name] = value
				}
			}
		}
	}
	return out
}

// constType is the type name and literal of a constant declared as
// `X T = "v"` or `X = T("v")`.
func constType(typ, value ast.Expr) (string, *ast.BasicLit) {
	if id, ok := typ.(*ast.Ident); ok {
		lit, _ := value.(*ast.BasicLit)
		return id.Name, lit
	}
	if call, ok := value.(*ast.CallExpr); ok && len(call.Args) == 1 {
		if id, ok := call.Fun.(*ast.Ident); ok {
			lit, _ := call.Args[0].(*ast.BasicLit)
			return id.Name, lit
		}
	}
	return "", nil
}
