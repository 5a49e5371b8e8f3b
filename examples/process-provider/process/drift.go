package process

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Inspect reads the tenant's processes live and compares each with what
// spec asks: that it runs, its executable (the image), its arguments, its
// environment (secrets redacted) and its ports; a process of a container
// spec does not have is drift too. It changes nothing.
func (p *Provider) Inspect(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	st, err := p.load(spec.TenantID)
	if err != nil {
		return nil, err
	}
	want, err := p.desire(spec, st, false)
	if err != nil {
		return nil, err
	}
	var drift provider.DriftCollector
	for _, d := range want {
		at := "containers/" + d.name
		rec := st.container(d.name)
		pr, r := find(spec.TenantID, rec)
		if pr == nil {
			found := "exited"
			if rec == nil {
				found = ""
			}
			drift.Compare(at+"/state", provider.DriftState, "running", found)
			continue
		}
		drift.Compare(at+"/image", provider.DriftImage, d.exe, r.exe)
		drift.Compare(at+"/command", provider.DriftCommand, quoted(d.argv), quoted(argsOf(r)))
		// Values of secrets, of what were secrets, and of variables the spec
		// does not set (a process started by hand may carry anything) are
		// never shown.
		drift.CompareMap(at+"/env", provider.DriftEnv, d.env, r.env, func(k string) bool {
			_, inSpec := d.env[k]
			return d.secret(k) || st.wasSecret(k) || !inSpec
		})
		if !samePorts(pr.Ports, d.ports) {
			drift.Compare(at+"/ports", provider.DriftPorts, fmt.Sprint(d.ports), fmt.Sprint(pr.Ports))
		}
	}
	for _, pr := range st.Containers {
		if !slices.ContainsFunc(want, func(d desired) bool { return d.name == pr.Name }) && pr.alive() {
			drift.Compare("containers/"+pr.Name, provider.DriftState, "", "running")
		}
	}
	return &provider.Inspection{Status: p.status(ctx, st), Drift: drift.Drift()}, nil
}

func quoted(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(q, " ") + "]"
}
