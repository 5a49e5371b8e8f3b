package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// TestFleetPlanBoundedByReference: a dry run of a version that adds a
// value of 900 KB to 40 tenants answers each tenant by reference to one
// diff, whose value is cut: the answer grows by a row per tenant, not by
// the version's size (a 1 MB version and 109 tenants made 142 MB, in
// memory twice over, and the server's memory stayed at a gigabyte).
func TestFleetPlanBoundedByReference(t *testing.T) {
	ts := newServer(t)
	ts.plan(t, "big", `{"image":"example.com/app:1"}`)
	const tenants = 40
	for i := range tenants {
		body := fmt.Sprintf(`{"name":"t%02d","compute_config":{"env":{"OWN":"%d"}},"plan":{"name":"big"}}`, i, i)
		if res := ts.do(t, "POST", "/v1/tenants", "application/json", body); res.status != http.StatusCreated {
			t.Fatalf("create t%02d: %d %s", i, res.status, res.body)
		}
	}
	big := strings.Repeat("x", 900_000)
	ts.publish(t, "big", fmt.Sprintf(`{"image":"example.com/app:1","env":{"BIG":%q}}`, big))

	res := ts.do(t, "POST", "/v1/rollouts?dry_run=true", "application/json", `{"plan":"big"}`)
	if res.status != http.StatusOK {
		t.Fatalf("dry run: %d %.500s", res.status, res.body)
	}
	t.Logf("the fleet plan of %d tenants of a 900 KB version: %d bytes", tenants, len(res.body))
	// A row of each tenant is about 200 bytes; the rest is the diff, cut.
	if limit := 16<<10 + tenants*512; len(res.body) > limit {
		t.Fatalf("the fleet plan of %d tenants of a 900 KB version is %d bytes, want at most %d", tenants, len(res.body), limit)
	}
	var fp wire.FleetPlan
	mustDecode(t, res, &fp)
	if len(fp.Diffs) != 1 || fp.Diffs[0].Tenants != tenants || len(fp.Diffs[0].Changes) != 1 {
		t.Fatalf("diffs %+v, want one of %d tenants with one change", fp.Diffs, tenants)
	}
	c := fp.Diffs[0].Changes[0]
	if c.Field != "containers/app/env/BIG" || !strings.HasPrefix(c.To, "xxx") || !strings.HasSuffix(c.To, "… (900000 bytes)") || len(c.To) > wire.MaxChangeValue+32 {
		t.Errorf("change %s to %d bytes ending %q; want BIG's value cut, saying its size", c.Field, len(c.To), c.To[max(0, len(c.To)-32):])
	}
	for _, w := range fp.Waves {
		for _, pt := range w.Tenants {
			if pt.Diff != fp.Diffs[0].ID || fp.DiffOf(pt) == nil {
				t.Errorf("%s: diff %q, want %q", pt.Name, pt.Diff, fp.Diffs[0].ID)
			}
		}
	}
}

// TestRolloutZeroIsNotNoLimit: a count, percent or max_in_flight of 0 (or
// a from_version, to_version or deadline of 0) meant its default, no
// limit (a 0% canary shipped to the whole fleet) while the CLI refused 0
// and the API refused 101: 0 is refused at its pointer, and the default
// is the key left out.
func TestRolloutZeroIsNotNoLimit(t *testing.T) {
	ts := newServer(t)
	fleetOf(t, ts, 3)
	for _, tt := range []struct {
		body string
		at   []string
	}{
		{`{"plan":"standard","waves":[{"name":"canary","percent":0}]}`, []string{"/waves/0/percent"}},
		{`{"plan":"standard","waves":[{"name":"canary","count":1},{"name":"b","count":0}]}`, []string{"/waves/1/count"}},
		{`{"plan":"standard","waves":[{"name":"canary","count":1,"max_in_flight":0}]}`, []string{"/waves/0/max_in_flight"}},
		{`{"plan":"standard","waves":[{"count":0,"percent":0,"max_in_flight":0}]}`, []string{"/waves/0/count", "/waves/0/percent", "/waves/0/max_in_flight"}},
		{`{"plan":"standard","from_version":0}`, []string{"/from_version"}},
		{`{"plan":"standard","to_version":0}`, []string{"/to_version"}},
		{`{"plan":"standard","deadline":"0s"}`, []string{"/deadline"}},
	} {
		for _, path := range []string{"/v1/rollouts?dry_run=true", "/v1/rollouts"} {
			t.Run(path+" "+tt.body, func(t *testing.T) {
				p := expectProblem(t, ts.do(t, "POST", path, "application/json", tt.body), http.StatusUnprocessableEntity, wire.CodeInvalidBody, tt.at...)
				if len(p.Errors) != len(tt.at) || !strings.Contains(p.Errors[0].Message, "leave") {
					t.Errorf("errors %+v, want one at each of %v saying to leave the key out", p.Errors, tt.at)
				}
			})
		}
	}
	// Left out, or null, each is its default.
	for _, body := range []string{
		`{"plan":"standard","waves":[{"name":"canary","count":1},{"name":"b"}]}`,
		`{"plan":"standard","from_version":null,"waves":[{"name":"canary","count":null,"percent":30,"max_in_flight":null}]}`,
	} {
		if res := ts.do(t, "POST", "/v1/rollouts?dry_run=true", "application/json", body); res.status != http.StatusOK {
			t.Errorf("%s: %d %s", body, res.status, res.body)
		}
	}
	var list wire.RolloutList
	mustDecode(t, ts.do(t, "GET", "/v1/rollouts", "", ""), &list)
	if len(list.Rollouts) != 0 {
		t.Errorf("a refused request started %d rollouts", len(list.Rollouts))
	}
}

// TestRolloutWavesCapped: 10,000 waves were accepted (30 minutes to walk
// through, a status of 479 KB); at most wire.MaxWaves (100) are.
func TestRolloutWavesCapped(t *testing.T) {
	ts := newServer(t)
	fleetOf(t, ts, 2)
	waves := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf(`{"name":"w%d","count":1}`, i)
		}
		return `{"plan":"standard","waves":[` + strings.Join(ws, ",") + `]}`
	}
	for _, n := range []int{101, 10_000} {
		p := expectProblem(t, ts.do(t, "POST", "/v1/rollouts", "application/json", waves(n)), http.StatusUnprocessableEntity, wire.CodeInvalidBody, "/waves")
		if len(p.Errors) != 1 || !strings.Contains(p.Errors[0].Message, "at most 100") {
			t.Errorf("%d waves: errors %+v, want one at /waves saying at most 100", n, p.Errors)
		}
	}
	if res := ts.do(t, "POST", "/v1/rollouts?dry_run=true", "application/json", waves(100)); res.status != http.StatusOK {
		t.Errorf("100 waves: %d %.300s", res.status, res.body)
	}
}
