package oidc

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Defaults and bounds of Config.
const (
	DefaultGroupsClaim = "groups"
	DefaultActorClaim  = "sub"
	DefaultClockSkew   = time.Minute
	// MaxClockSkew bounds ClockSkew: more would let an expired token in
	// for longer than any clock is plausibly wrong.
	MaxClockSkew      = 5 * time.Minute
	DefaultMinRefresh = 10 * time.Second
	DefaultMaxKeyAge  = time.Hour
	// DefaultMaxStaleKeyAge bounds how long keys serve while the issuer
	// cannot be reached to fetch them again.
	DefaultMaxStaleKeyAge = 24 * time.Hour
	// DefaultFetchTimeout bounds one fetch of the discovery document or
	// the keys.
	DefaultFetchTimeout = 10 * time.Second
)

// maxDocumentBytes bounds what is read of a discovery document or a key
// set.
const maxDocumentBytes = 1 << 20

// Config configures a Verifier. Issuer, Audience and at least one of
// AdminGroups and ReaderGroups are required; zero values of the rest take
// the defaults above.
type Config struct {
	// Issuer is the identity provider's issuer URL, matched exactly
	// against a token's "iss". It must be https, except on a loopback
	// host.
	Issuer string
	// Audience must be one of a token's "aud".
	Audience string
	// JWKSURL is where the signing keys are; empty means the jwks_uri of
	// the issuer's discovery document,
	// {Issuer}/.well-known/openid-configuration.
	JWKSURL string
	// GroupsClaim names the top-level claim that holds the holder's
	// groups: a list of strings, or one string.
	GroupsClaim string
	// AdminGroups and ReaderGroups map groups to roles: a token naming an
	// admin group is an admin, else one naming a reader group a reader.
	AdminGroups  []string
	ReaderGroups []string
	// ActorClaim names the string claim recorded as the actor of the
	// holder's changes.
	ActorClaim string
	// ActorPrefix is put before the actor's name ("sso:" makes the
	// subject alice "sso:alice"), so that the history tells the
	// provider's users from landlord's tokens of the same name.
	ActorPrefix string
	// ClockSkew is the leeway given to exp, nbf and iat, at most
	// MaxClockSkew.
	ClockSkew time.Duration
	// MinRefresh is the least time between two fetches of the keys
	// caused by tokens signed with unknown keys.
	MinRefresh time.Duration
	// MaxKeyAge is how long fetched keys are used before being fetched
	// again.
	MaxKeyAge time.Duration
	// MaxStaleKeyAge is how long fetched keys go on serving while they
	// cannot be fetched again; after it, tokens get ErrUnavailable.
	MaxStaleKeyAge time.Duration
	// HTTPClient fetches the discovery document and the keys; nil means
	// a client with DefaultFetchTimeout.
	HTTPClient *http.Client
	// Logger is told of fetches and their failures; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// ErrConfig is wrapped by New's errors about the configuration.
var ErrConfig = errors.New("oidc: bad configuration")

// withDefaults returns c with its zero values filled in, or every problem
// with it.
func (c Config) withDefaults() (Config, error) {
	if c.GroupsClaim == "" {
		c.GroupsClaim = DefaultGroupsClaim
	}
	if c.ActorClaim == "" {
		c.ActorClaim = DefaultActorClaim
	}
	if c.ClockSkew == 0 {
		c.ClockSkew = DefaultClockSkew
	}
	if c.MinRefresh == 0 {
		c.MinRefresh = DefaultMinRefresh
	}
	if c.MaxKeyAge == 0 {
		c.MaxKeyAge = DefaultMaxKeyAge
	}
	if c.MaxStaleKeyAge == 0 {
		c.MaxStaleKeyAge = max(DefaultMaxStaleKeyAge, c.MaxKeyAge)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: DefaultFetchTimeout}
	}
	if c.HTTPClient.CheckRedirect == nil {
		// A redirect must not take the keys' fetch to plain HTTP.
		hc := *c.HTTPClient
		hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("more than 5 redirects")
			}
			return checkURL(req.URL.String())
		}
		c.HTTPClient = &hc
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if err := errors.Join(c.Problems()...); err != nil {
		return c, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return c, nil
}

// Problems reports every problem with c, each naming its key as a
// configuration file spells it (issuer, audience, clock_skew…).
func (c Config) Problems() []error {
	var errs []error
	if c.Issuer == "" {
		errs = append(errs, errors.New("issuer is required"))
	} else if err := checkURL(c.Issuer); err != nil {
		errs = append(errs, fmt.Errorf("issuer: %w", err))
	}
	if c.JWKSURL != "" {
		if err := checkURL(c.JWKSURL); err != nil {
			errs = append(errs, fmt.Errorf("jwks_url: %w", err))
		}
	}
	if c.Audience == "" {
		errs = append(errs, errors.New("audience is required: the value landlord's tokens carry in aud, often the client id landlord has at the identity provider"))
	}
	if len(c.AdminGroups) == 0 && len(c.ReaderGroups) == 0 {
		errs = append(errs, errors.New("admin_groups or reader_groups is required: without them no token has a role"))
	}
	if c.ClockSkew < 0 || c.ClockSkew > MaxClockSkew {
		errs = append(errs, fmt.Errorf("clock_skew %s is not between 1s and %s", c.ClockSkew, MaxClockSkew))
	}
	if c.MinRefresh < 0 || c.MaxKeyAge < 0 || c.MaxStaleKeyAge < 0 {
		errs = append(errs, errors.New("the key refresh intervals must not be negative"))
	}
	return errs
}

// checkURL accepts an absolute https URL, or http on a loopback host.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if loopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("%q is plain http: keys fetched over it could be forged; use https", s)
	}
	return fmt.Errorf("%q is not an https URL", s)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
