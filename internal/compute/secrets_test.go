package compute_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// MapSecrets visits what Redact replaces, at the JSON pointer of each,
// escaped; a value whose shape the schema cannot follow is passed whole.
func TestMapSecrets(t *testing.T) {
	s := mustWorkloadSchema(t, map[string]json.RawMessage{
		"api_key": json.RawMessage(`{"type": "string", "writeOnly": true}`),
	})
	tests := []struct {
		name string
		in   string
		want map[string]any // pointer → value visited
		out  string
	}{
		{
			name: "main, sidecar, top level",
			in:   `{"image":"a","env":{"A":"visible"},"secrets":{"DB":"hunter2","a/b~c":"x"},"sidecars":[{"name":"b","image":"b","secrets":{"TOKEN":"t0k"}}],"api_key":"k3y"}`,
			want: map[string]any{"/secrets/DB": "hunter2", "/secrets/a~1b~0c": "x", "/sidecars/0/secrets/TOKEN": "t0k", "/api_key": "k3y"},
			out:  `{"api_key":"(k3y)","env":{"A":"visible"},"image":"a","secrets":{"DB":"(hunter2)","a/b~c":"(x)"},"sidecars":[{"image":"b","name":"b","secrets":{"TOKEN":"(t0k)"}}]}`,
		},
		{
			name: "a shape the schema cannot follow is one secret",
			in:   `{"image":"a","secrets":["hunter2"]}`,
			want: map[string]any{"/secrets": []any{"hunter2"}},
			out:  `{"image":"a","secrets":"([hunter2])"}`,
		},
		{
			name: "no secret",
			in:   `{"image":"a","env":{"secrets":"not one"}}`,
			want: map[string]any{},
			out:  `{"env":{"secrets":"not one"},"image":"a"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := workload.DecodeValue(json.RawMessage(tt.in), "test")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			out, err := s.MapSecrets(v, func(ptr string, val any) (any, error) {
				got[ptr] = val
				return fmt.Sprintf("(%v)", val), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("visited (-want +got):\n%s", diff)
			}
			if b, _ := json.Marshal(out); string(b) != tt.out {
				t.Errorf("result = %s, want %s", b, tt.out)
			}
		})
	}
	boom := errors.New("boom")
	v, _ := workload.DecodeValue(json.RawMessage(`{"image":"a","secrets":{"DB":"x"}}`), "test")
	if _, err := s.MapSecrets(v, func(string, any) (any, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("MapSecrets passed on %v, want fn's error", err)
	}
}

func TestMayHoldSecrets(t *testing.T) {
	s := mustWorkloadSchema(t, nil)
	for in, want := range map[string]bool{
		`{"image":"a","env":{"A":"1"}}`:       false,
		`{"image":"a","secrets":{"A":"1"}}`:   true,
		`{"image":"a","env":{"\u0041":"1"}}`:  true, // an escape may spell any name
		`{"image":"a","sidecars":[{"n":1}]}`:  true,
		`{"image":"a","labels":"no secrets"}`: false,
	} {
		if got := s.MayHoldSecrets([]byte(in)); got != want {
			t.Errorf("MayHoldSecrets(%s) = %v, want %v", in, got, want)
		}
	}
}
