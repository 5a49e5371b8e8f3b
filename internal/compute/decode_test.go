package compute_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// TestResolveIntegralNumbers: the schema reads 80.0 and 1e2 as integers,
// and so does everything after it (they failed in Go's decoding, worded
// with Go's type names); a number too large for a Go field is a violation
// at its pointer.
func TestResolveIntegralNumbers(t *testing.T) {
	m := newManager(t, "", map[string]string{"mock": `{"resources":{"memory_mib":6.4e1}}`})
	res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t1",
		ComputeConfig: json.RawMessage(`{"image":"a","ports":[{"container_port":80.0},{"container_port":1e2}],"x-mock":{"fail_times":3.0},"x-other":2.50}`)})
	if err != nil {
		t.Fatal(err)
	}
	ports := res.Spec.Containers[0].Ports
	if len(ports) != 2 || ports[0].ContainerPort != 80 || ports[1].ContainerPort != 100 || res.Spec.Containers[0].Resources.MemoryMiB != 64 {
		t.Errorf("spec = %+v", res.Spec.Containers[0])
	}
	effective := string(res.Spec.ProviderConfig)
	for _, want := range []string{`"container_port":80}`, `"container_port":100}`, `"fail_times":3}`, `"memory_mib":64}`, `"x-other":2.50`} {
		if !strings.Contains(effective, want) {
			t.Errorf("effective config %s lacks %s", effective, want)
		}
	}
	if string(res.Config) != string(json.RawMessage(`{"image":"a","ports":[{"container_port":80.0},{"container_port":1e2}],"x-mock":{"fail_times":3.0},"x-other":2.50}`)) {
		t.Errorf("the config to store was respelled: %s", res.Config)
	}

	_, err = m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t1",
		ComputeConfig: json.RawMessage(`{"image":"a","x-mock":{"fail_times":1e19}}`)})
	v := violation.Of(err)
	if !errors.Is(err, provider.ErrInvalidSpec) || len(v) != 1 || v[0].Pointer != "/x-mock/fail_times" ||
		v[0].Message != "must be an integer from -9223372036854775808 to 9223372036854775807" {
		t.Errorf("fail_times 1e19: %v", err)
	}
}
