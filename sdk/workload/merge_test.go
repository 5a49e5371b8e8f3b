package workload_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

func TestMergeConfig(t *testing.T) {
	tests := []struct {
		name     string
		defaults string
		tenant   string
		want     string
	}{
		{"acceptance: deep merge", `{"env":{"A":"1","B":"2"},"image":"x"}`, `{"env":{"B":"3"}}`, `{"env":{"A":"1","B":"3"},"image":"x"}`},
		{"arrays are replaced", `{"ports":[{"container_port":80},{"container_port":443}]}`, `{"ports":[{"container_port":8080}]}`, `{"ports":[{"container_port":8080}]}`},
		{"null removes a default key", `{"env":{"A":"1","B":"2"},"image":"x"}`, `{"env":{"A":null},"image":null}`, `{"env":{"B":"2"}}`},
		{"null for an absent key is dropped", `{}`, `{"a":null,"b":{"c":null,"d":1}}`, `{"b":{"d":1}}`},
		{"object replaces a scalar", `{"a":1}`, `{"a":{"b":2}}`, `{"a":{"b":2}}`},
		{"scalar replaces an object", `{"a":{"b":2}}`, `{"a":"flat"}`, `{"a":"flat"}`},
		{"no defaults", ``, `{"image":"x"}`, `{"image":"x"}`},
		{"null defaults", `null`, `{"image":"x"}`, `{"image":"x"}`},
		{"numbers keep their precision", `{"n":12345678901234567890}`, `{"m":0.1000000000000000055511151231257827}`, `{"m":0.1000000000000000055511151231257827,"n":12345678901234567890}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := workload.Merge(json.RawMessage(tt.defaults), json.RawMessage(tt.tenant))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Merge = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestMergeConfigRefusesNonObjects(t *testing.T) {
	for _, tt := range []struct{ defaults, tenant string }{
		{`{}`, `[1]`},
		{`{}`, `"x"`},
		{`[1]`, `{}`},
		{`{}`, `{`},
		{`{}`, ``},
	} {
		if _, err := workload.Merge(json.RawMessage(tt.defaults), json.RawMessage(tt.tenant)); !errors.Is(err, workload.ErrInvalid) {
			t.Errorf("Merge(%q, %q) = %v, want ErrInvalid", tt.defaults, tt.tenant, err)
		}
	}
}
