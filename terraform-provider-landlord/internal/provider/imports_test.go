package provider_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSpeaksOnlyThroughTheClient: the provider's packages import of
// landlord nothing but its public Go client (and the SDK's JSON-pointer
// helpers), so that it works against any landlord the client does, and
// the server's code stays out of it.
func TestSpeaksOnlyThroughTheClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "../..", "../../internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const landlord, self = "github.com/jaxxstorm/landlord/", "github.com/jaxxstorm/landlord/terraform-provider-landlord"
	packages := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		packages++
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, landlord) && !strings.HasPrefix(imp, self) && imp != landlord+"client" && imp != landlord+"sdk/violation" {
				t.Errorf("%s imports %s: the provider speaks to landlord through %sclient alone", fields[0], imp, landlord)
			}
		}
	}
	if packages < 2 {
		t.Fatalf("go list found %d packages:\n%s", packages, out)
	}
}
