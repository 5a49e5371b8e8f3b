package fleet

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/sdk/violation"
)

// specWith is a valid spec of plan standard to version 2 with waves.
func specWith(waves ...Wave) Spec {
	return Spec{Plan: "standard", To: 2, Waves: waves}
}

// TestValidateSpecPointers: each problem of a wave is at its pointer in the
// request body (a bad selector key was at /waves/0/selector/label/KEY, a
// path the body does not have); the name rest is the last wave's, which
// takes what the others leave (a last rest with a selector made two waves
// named rest).
func TestValidateSpecPointers(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec Spec
		want []string // pointers, sorted
	}{
		{"a bad selector key", specWith(Wave{Name: "a", Selector: map[string]string{"Bad Key!": "x", "ring": "canary"}}), []string{"/waves/0/selector/Bad Key!"}},
		{"a bad selector value", specWith(Wave{Name: "a"}, Wave{Name: "b", Selector: map[string]string{"ring": "not ok!"}}), []string{"/waves/1/selector/ring"}},
		{"a selector key with / and ~", specWith(Wave{Name: "a", Selector: map[string]string{"a/b~": "x"}}), []string{"/waves/0/selector/a~1b~0"}},
		{"rest last, taking the rest", specWith(Wave{Name: "canary", Count: 1}, Wave{Name: RestWave, MaxInFlight: 2}), nil},
		{"rest last, with a selector", specWith(Wave{Name: "canary", Count: 1}, Wave{Name: RestWave, Selector: map[string]string{"ring": "late"}}), []string{"/waves/1/name"}},
		{"rest last, with a count", specWith(Wave{Name: RestWave, Count: 3}), []string{"/waves/0/name"}},
		{"rest last, with a percent", specWith(Wave{Name: RestWave, Percent: 50}), []string{"/waves/0/name"}},
		{"rest first", specWith(Wave{Name: RestWave}, Wave{Name: "b"}), []string{"/waves/0/name"}},
		{"a name twice", specWith(Wave{Name: "a"}, Wave{Name: "a"}), []string{"/waves/1/name"}},
		{"a name twice, one left out", specWith(Wave{Name: "wave-2"}, Wave{}), []string{"/waves/1/name"}},
		{"as many waves as allowed", specWith(make([]Wave, MaxWaves)...), nil},
		{"a wave too many", specWith(make([]Wave, MaxWaves+1)...), []string{"/waves"}},
		{"10,000 waves", specWith(make([]Wave, 10000)...), []string{"/waves"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range violation.Of(ValidateSpec(tt.spec)) {
				got = append(got, v.Pointer)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pointers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAssignOneRestWave: however the spec names its waves, Assign makes no
// two waves of one name, and puts the tenants no wave takes in rest.
func TestAssignOneRestWave(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec Spec
		want string // name:size of each wave
	}{
		{"no waves", specWith(), "rest:10"},
		{"rest added", specWith(Wave{Name: "canary", Count: 1}), "canary:1 rest:9"},
		{"every tenant taken", specWith(Wave{Name: "canary", Count: 1}, Wave{Name: "all"}), "canary:1 all:9"},
		{"the spec's rest", specWith(Wave{Name: "canary", Count: 1}, Wave{Name: RestWave}), "canary:1 rest:9"},
		// Specs ValidateSpec refuses: still one rest, which takes what
		// the others leave.
		{"the spec's last rest, with a selector", specWith(Wave{Name: "canary", Count: 1}, Wave{Name: RestWave, Selector: map[string]string{"ring": "late"}}), "canary:1 rest:9"},
		{"the spec's first rest, limited", specWith(Wave{Name: RestWave, Count: 1}, Wave{Name: "b", Count: 2}), "rest:8 b:2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			waves, members := Assign(tt.spec, fleetOf(10))
			var got []string
			for _, w := range waves {
				got = append(got, fmt.Sprintf("%s:%d", w.Name, w.Size))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("waves %s, want %s", strings.Join(got, " "), tt.want)
			}
			if len(members) != 10 {
				t.Errorf("%d members, want 10", len(members))
			}
			for i, w := range waves {
				n := 0
				for _, m := range members {
					if m.Wave == i {
						n++
					}
				}
				if n != w.Size {
					t.Errorf("wave %s: size %d, %d members", w.Name, w.Size, n)
				}
			}
			names := map[string]bool{}
			for _, w := range waves {
				if names[w.Name] {
					t.Errorf("two waves named %s", w.Name)
				}
				names[w.Name] = true
			}
			ids := map[string]bool{}
			for _, m := range members {
				ids[m.TenantID] = true
			}
			if len(ids) != 10 || slices.ContainsFunc(members, func(m Member) bool { return m.Wave < 0 || m.Wave >= len(waves) }) {
				t.Errorf("members %+v: want each tenant once, in a wave", members)
			}
		})
	}
}
