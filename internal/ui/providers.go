package ui

import (
	"slices"

	"github.com/jaxxstorm/landlord/client"
)

type providerView struct {
	client.Provider
	Schema, Defaults string
	Error            string
}

// capabilityNames are the capabilities a provider may declare, in the
// order the page lists them.
var capabilityNames = []string{"in_place_update", "multiple_containers", "secrets", "published_ports", "public_networking", "health_checks", "scaling", "volumes"}

// Capabilities lists every capability and whether the provider has it.
func (p providerView) Capabilities() []capability {
	out := make([]capability, len(capabilityNames))
	for i, n := range capabilityNames {
		out[i] = capability{Name: n, Has: p.Provider.Capabilities[n]}
	}
	return out
}

type capability struct {
	Name string
	Has  bool
}

func (c *Console) providersPage(x *call) error {
	list, err := x.api.Compute().Providers(x.r.Context())
	if err != nil {
		return err
	}
	var out []providerView
	for _, p := range list.Providers {
		v := providerView{Provider: p}
		if cc, err := x.api.Compute().Config(x.r.Context(), p.Name); err != nil {
			v.Error = err.Error()
		} else {
			v.Schema, v.Defaults = pretty(cc.Schema), pretty(cc.Defaults)
		}
		out = append(out, v)
	}
	return c.show(x, "providers", "Providers", "providers", out)
}

// providerNames are the enabled providers' names, for the filters and the
// form. Providers are enabled when landlord starts, so the first answer
// holds; it is kept, since the API's list asks each provider whether its
// platform answers, which a page of tenants has no need to wait for.
func (c *Console) providerNames(x *call) []string {
	c.mu.Lock()
	names := c.providers
	c.mu.Unlock()
	if names != nil {
		return slices.Clone(names)
	}
	list, err := x.api.Compute().Providers(x.r.Context())
	if err != nil {
		return nil // the page shows no choice; the next one asks again
	}
	names = []string{}
	for _, p := range list.Providers {
		names = append(names, p.Name)
	}
	c.mu.Lock()
	c.providers = names
	c.mu.Unlock()
	return slices.Clone(names)
}
