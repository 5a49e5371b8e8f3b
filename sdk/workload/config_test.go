package workload_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		pointers []string
	}{
		{"valid", `{"image":"a","ports":[{"container_port":80,"host_port":8080},{"container_port":80,"protocol":"udp","host_port":8080}]}`, nil},
		{"duplicate sidecar names", `{"image":"a","sidecars":[{"name":"b","image":"b"},{"name":"b","image":"c"}]}`, []string{"/sidecars/1/name"}},
		{"sidecar named like the main container", `{"image":"a","name":"web","sidecars":[{"name":"web","image":"b"}]}`, []string{"/sidecars/0/name"}},
		{"same port twice", `{"image":"a","ports":[{"container_port":80},{"container_port":80,"protocol":"tcp"}]}`, []string{"/ports/1/container_port"}},
		{"host port across containers", `{"image":"a","ports":[{"container_port":80,"host_port":9000}],"sidecars":[{"name":"b","image":"b","ports":[{"container_port":81,"host_port":9000}]}]}`, []string{"/sidecars/0/ports/0/host_port"}},
		{"bad variable names", `{"image":"a","env":{"1BAD":"x","OK":"y"},"secrets":{"A-B":"z"}}`, []string{"/env/1BAD", "/secrets/A-B"}},
		{"env and secret overlap", `{"image":"a","env":{"K":"1"},"secrets":{"K":"2"}}`, []string{"/secrets/K"}},
		{"no probe", `{"image":"a","health_check":{"interval":"5s"}}`, []string{"/health_check"}},
		{"two probes", `{"image":"a","health_check":{"command":["x"],"http":{"port":80}}}`, []string{"/health_check"}},
		{"bad duration", `{"image":"a","health_check":{"tcp":{"port":80},"timeout":"5 seconds"}}`, []string{"/health_check/timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := workload.Decode(json.RawMessage(tt.config))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range c.Check() {
				got = append(got, v.Pointer)
			}
			if diff := cmp.Diff(tt.pointers, got); diff != "" {
				t.Errorf("pointers (-want +got):\n%s", diff)
			}
		})
	}
}
