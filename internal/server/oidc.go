package server

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/oidc"
)

// newVerifier returns the verifier of the oidc block's identity provider,
// or nil when the block is off. It fetches the provider's keys in the
// background: a provider that cannot be reached at start-up is logged,
// and landlord's own tokens work meanwhile.
func newVerifier(ctx context.Context, c config.OIDC, log *slog.Logger) (identity.TokenVerifier, error) {
	if !c.Enabled() {
		return nil, nil
	}
	vc := c.Verifier()
	vc.Logger = log
	if c.CAFile != "" {
		pool, err := certPool("oidc.ca_file", c.CAFile)
		if err != nil {
			return nil, err
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
		vc.HTTPClient = &http.Client{Transport: tr, Timeout: oidc.DefaultFetchTimeout}
	}
	v, err := oidc.New(vc)
	if err != nil {
		return nil, err
	}
	go func() {
		if err := v.Warm(ctx); err == nil {
			log.Info("single sign-on: the identity provider's keys are fetched", "issuer", c.Issuer)
		}
	}()
	return v, nil
}
