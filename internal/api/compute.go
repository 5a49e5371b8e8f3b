package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
)

func (s *Server) listProviders(w http.ResponseWriter, r *http.Request) error {
	out := ProviderList{Providers: []Provider{}}
	for _, p := range s.compute.Registry().List() {
		healthy, msg := providerHealth(r.Context(), p)
		out.Providers = append(out.Providers, Provider{Name: p.Name(), Default: p.Name() == s.compute.DefaultProvider(), Healthy: healthy, Message: msg})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// providerHealth asks a provider that can tell whether its platform
// answers, within a short time.
func providerHealth(ctx context.Context, p compute.Provider) (bool, string) {
	hc, ok := p.(compute.HealthChecker)
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
	p, err := s.compute.Registry().Get(name)
	var nf *compute.ProviderNotFoundError
	if errors.As(err, &nf) {
		return problem(http.StatusNotFound, CodeProviderNotFound, nf.Error(), FieldError{Parameter: "provider", Message: "is not an enabled provider"})
	}
	if err != nil {
		return err
	}
	defaults := p.ConfigDefaults()
	if len(defaults) == 0 {
		defaults = json.RawMessage("null")
	}
	writeJSON(w, http.StatusOK, ComputeConfig{Provider: p.Name(), Schema: p.ConfigSchema(), Defaults: defaults})
	return nil
}
