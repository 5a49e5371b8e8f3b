package sdk_test

import (
	"maps"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/jaxxstorm/landlord"

// helpers are the module's packages outside the SDK that the SDK may use,
// each with why: small helpers of the standard library alone, which an
// out-of-tree module gets with the SDK and never names.
var helpers = map[string]string{
	module + "/internal/wire":     "how values and drift are worded, as the API words them",
	module + "/internal/jsonscan": "JSON text checks (depth, NUL, null) without decoding",
}

// suiteHelpers are what the conformance suite adds: it resolves configs
// through landlord's own resolution, so that a provider is tested on the
// specs landlord hands it.
var suiteHelpers = map[string]string{
	module + "/internal/compute": "landlord's resolution of a compute_config into a spec",
	module + "/internal/poll":    "the tests' one way to wait for a condition",
}

// TestSDKStandsAlone: the SDK's packages depend on nothing of landlord but
// the SDK and a few helpers of the standard library alone, so that a
// provider built on it, in another module, carries none of the server.
func TestSDKStandsAlone(t *testing.T) {
	for _, pkg := range []string{"provider", "workload", "violation", "tenantlock", "plugin", "plugin/pluginpb", "providertest"} {
		allowed := maps.Clone(helpers)
		if pkg == "providertest" {
			maps.Copy(allowed, suiteHelpers)
		}
		for _, dep := range goList(t, "-deps", module+"/sdk/"+pkg) {
			if strings.HasPrefix(dep, module+"/") && !strings.HasPrefix(dep, module+"/sdk/") && allowed[dep] == "" {
				t.Errorf("sdk/%s depends on %s, which is not part of the SDK; a provider out of tree would carry it", pkg, dep)
			}
		}
	}
}

// TestProvidersUseOnlyTheSDK: the in-tree providers import of landlord
// only the SDK, as an out-of-tree provider does, so that the SDK is enough
// to write one.
func TestProvidersUseOnlyTheSDK(t *testing.T) {
	for _, name := range []string{"docker", "ecs", "kubernetes", "nomad", "mock"} {
		pkg := module + "/internal/compute/providers/" + name
		for _, imp := range goList(t, "-f", `{{join .Imports "\n"}}`, pkg) {
			if strings.HasPrefix(imp, module+"/") && !strings.HasPrefix(imp, module+"/sdk/") {
				t.Errorf("provider %s imports %s: providers build on the SDK (sdk/...) alone", name, imp)
			}
		}
	}
}

// goList runs go list with args and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		var stderr string
		if e, ok := err.(*exec.ExitError); ok {
			stderr = string(e.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Fields(string(out))
}
