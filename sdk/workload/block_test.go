package workload_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

type settings struct {
	Host    string            `json:"host"`
	Timeout workload.Duration `json:"timeout"`
	Secret  string            `json:"-"`
	Plain   bool
}

func TestSplitBlock(t *testing.T) {
	schema, err := workload.Schema("test", nil)
	if err != nil {
		t.Fatal(err)
	}
	var s settings
	defaults, err := workload.SplitBlock("test", json.RawMessage(`{"host":"h","timeout":"2s","image":"x","env":{"A":"1"}}`), &s, schema)
	if err != nil {
		t.Fatal(err)
	}
	if s.Host != "h" || time.Duration(s.Timeout) != 2*time.Second {
		t.Errorf("settings = %+v", s)
	}
	if string(defaults) != `{"env":{"A":"1"},"image":"x"}` {
		t.Errorf("defaults = %s", defaults)
	}
	_, err = workload.SplitBlock("test", json.RawMessage(`{"imgae":"x","timeout":5,"host":true}`), &s, schema)
	for _, want := range []string{"compute.test: ", "/imgae: unknown key; settings are Plain, host, timeout, and tenant defaults may set any of ",
		"/timeout: must be a string, not a JSON number", "/host: must be a string, not a JSON bool"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SplitBlock of a bad block = %v, want it to say %q", err, want)
		}
	}
	if defaults, err := workload.SplitBlock("test", nil, &s, schema); err != nil || defaults != nil {
		t.Errorf("SplitBlock(nil) = %s, %v", defaults, err)
	}
}

func TestChangedFields(t *testing.T) {
	type options struct {
		A string   `json:"a,omitempty"`
		B []string `json:"b"`
		C bool     `json:"-"`
	}
	for _, tt := range []struct {
		name string
		a, b any
		want []string
	}{
		{"equal", options{A: "x", B: []string{"1"}}, options{A: "x", B: []string{"1"}}, nil},
		{"changed", options{A: "x", B: []string{"1"}}, options{A: "y", B: []string{"1", "2"}}, []string{"a", "b"}},
		{"ignored field", options{C: true}, options{}, nil},
		{"from nothing", nil, options{A: "x"}, []string{"a"}},
		{"to nothing", options{B: []string{"1"}}, nil, []string{"b"}},
		{"both nothing", nil, nil, nil},
	} {
		if got := workload.ChangedFields(tt.a, tt.b); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ChangedFields = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMergeObjectsLeavesDefaults(t *testing.T) {
	defaults := map[string]any{"env": map[string]any{"A": "1"}, "ports": []any{map[string]any{"container_port": 80}}}
	before, _ := json.Marshal(defaults)
	merged := workload.MergeObjects(defaults, map[string]any{"env": map[string]any{"A": nil, "B": "2"}})
	merged["ports"].([]any)[0].(map[string]any)["container_port"] = 81
	after, _ := json.Marshal(defaults)
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Errorf("MergeObjects changed the defaults (-before +after):\n%s", diff)
	}
	if got, _ := json.Marshal(merged["env"]); string(got) != `{"B":"2"}` {
		t.Errorf("merged env = %s", got)
	}
}

func TestDuration(t *testing.T) {
	var d workload.Duration
	if err := json.Unmarshal([]byte(`"1m30s"`), &d); err != nil || time.Duration(d) != 90*time.Second {
		t.Errorf("Unmarshal = %v, %v", time.Duration(d), err)
	}
	for _, bad := range []string{`"soon"`, `"-1s"`, `5`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
	}
	if b, _ := json.Marshal(workload.Duration(250 * time.Millisecond)); string(b) != `"250ms"` {
		t.Errorf("Marshal = %s", b)
	}
}
