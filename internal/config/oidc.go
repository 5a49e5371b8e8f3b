package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/oidc"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// OIDC configures single sign-on: landlord accepts the JWTs of one
// OpenID Connect identity provider as bearer tokens, beside its own
// tokens. The block is off while Issuer is empty.
type OIDC struct {
	// Issuer is the provider's issuer URL, exactly as its tokens' "iss"
	// names it.
	Issuer string `yaml:"issuer"`
	// Audience must be one of a token's "aud".
	Audience string `yaml:"audience"`
	// JWKSURL is where the signing keys are; empty means the jwks_uri of
	// the issuer's discovery document.
	JWKSURL string `yaml:"jwks_url"`
	// CAFile is a PEM bundle that verifies the issuer's HTTPS certificate
	// instead of the system's roots.
	CAFile string `yaml:"ca_file"`
	// GroupsClaim names the claim holding the holder's groups (default
	// groups); AdminGroups and ReaderGroups map groups to roles.
	GroupsClaim  string   `yaml:"groups_claim"`
	AdminGroups  []string `yaml:"admin_groups"`
	ReaderGroups []string `yaml:"reader_groups"`
	// ActorClaim names the claim recorded as the actor in history
	// (default sub).
	ActorClaim string `yaml:"actor_claim"`
	// ActorPrefix is put before the actor's name in history ("sso:").
	ActorPrefix string `yaml:"actor_prefix"`
	// ClockSkew is the leeway on exp, nbf and iat (default 1m, at most
	// 5m).
	ClockSkew workload.Duration `yaml:"clock_skew"`
}

// Enabled reports whether landlord accepts the provider's tokens.
func (o OIDC) Enabled() bool { return o.Issuer != "" }

// Verifier is the verifier's configuration, without its HTTP client.
func (o OIDC) Verifier() oidc.Config {
	return oidc.Config{
		Issuer: o.Issuer, Audience: o.Audience, JWKSURL: o.JWKSURL,
		GroupsClaim: o.GroupsClaim, AdminGroups: o.AdminGroups, ReaderGroups: o.ReaderGroups,
		ActorClaim: o.ActorClaim, ActorPrefix: o.ActorPrefix, ClockSkew: time.Duration(o.ClockSkew),
	}
}

// validate reports the problems of the oidc block.
func (o OIDC) validate() []error {
	if !o.Enabled() {
		if o.Audience != "" || o.JWKSURL != "" || o.CAFile != "" || len(o.AdminGroups) > 0 || len(o.ReaderGroups) > 0 {
			return []error{errors.New("oidc.issuer is required once the oidc block sets anything")}
		}
		return nil
	}
	var errs []error
	for _, err := range o.Verifier().Problems() {
		errs = append(errs, fmt.Errorf("oidc.%w", err))
	}
	return errs
}

// applyOIDCEnv reads LANDLORD_OIDC_ISSUER and LANDLORD_OIDC_AUDIENCE.
func applyOIDCEnv(cfg *Config, getenv func(string) string) {
	if v := getenv("LANDLORD_OIDC_ISSUER"); v != "" {
		cfg.OIDC.Issuer = v
	}
	if v := getenv("LANDLORD_OIDC_AUDIENCE"); v != "" {
		cfg.OIDC.Audience = v
	}
}
