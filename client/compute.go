package client

import (
	"context"
	"net/url"
)

// Compute is the compute resource of the API.
type Compute struct {
	c *Client
}

// Providers lists the enabled compute providers, which is the default and
// whether each is healthy.
func (s *Compute) Providers(ctx context.Context) (*ProviderList, error) {
	var out ProviderList
	if err := s.c.do(ctx, request{method: "GET", path: "/v1/compute/providers"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Config returns a provider's compute_config schema and defaults; an empty
// provider means the default one. An unknown provider is a 404 *Error.
func (s *Compute) Config(ctx context.Context, provider string) (*ComputeConfig, error) {
	q := url.Values{}
	if provider != "" {
		q.Set("provider", provider)
	}
	var out ComputeConfig
	if err := s.c.do(ctx, request{method: "GET", path: "/v1/compute/config", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WhoAmI returns the name and role of the client's token.
func (c *Client) WhoAmI(ctx context.Context) (*Identity, error) {
	var out Identity
	if err := c.do(ctx, request{method: "GET", path: "/v1/whoami"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
