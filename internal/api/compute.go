package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

func (s *Server) listProviders(w http.ResponseWriter, r *http.Request) error {
	out := wire.ProviderList{Providers: []wire.Provider{}}
	for _, p := range s.compute.Registry().List() {
		healthy, msg := providerHealth(r.Context(), p)
		d, err := s.compute.Registry().Describe(p.Name())
		if err != nil {
			return err
		}
		out.Providers = append(out.Providers, wire.Provider{Name: p.Name(), Default: p.Name() == s.compute.DefaultProvider(),
			Healthy: healthy, Message: msg, Capabilities: capabilities(d.Capabilities)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// providerHealth asks a provider that can tell whether its platform
// answers, within a short time.
func providerHealth(ctx context.Context, p provider.Provider) (bool, string) {
	hc, ok := p.(provider.HealthChecker)
	if !ok {
		return true, ""
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := hc.CheckHealth(ctx); err != nil {
		return false, err.Error()
	}
	return true, ""
}

func (s *Server) getComputeConfig(w http.ResponseWriter, r *http.Request) error {
	name := r.URL.Query().Get("provider")
	if name == "" {
		name = s.compute.DefaultProvider()
	}
	d, err := s.compute.Registry().Describe(name)
	if err != nil {
		return withFields(err, "", wire.FieldError{Parameter: "provider", Message: "is not an enabled provider"})
	}
	writeJSON(w, http.StatusOK, wire.ComputeConfig{Provider: d.Name, Schema: d.Schema, Defaults: d.Defaults, Capabilities: capabilities(d.Capabilities)})
	return nil
}

// capabilities is the wire form of what a provider declares: each
// capability by its JSON name; nil when it declares nothing.
func capabilities(c *provider.Capabilities) map[string]bool {
	if c == nil {
		return nil
	}
	b, _ := json.Marshal(c)
	var out map[string]bool
	_ = json.Unmarshal(b, &out)
	return out
}
