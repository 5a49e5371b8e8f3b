package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// ErrPlainHTTP is returned for plain HTTP on a non-loopback address that
// the configuration has not declared.
var ErrPlainHTTP = errors.New("plain HTTP on an address other than loopback sends tokens and secrets in clear text")

// CheckPlainHTTP refuses to serve plain HTTP on a non-loopback address
// unless insecure_http, insecure (which already allows serving without
// tokens there) or trusted_proxies declares it.
func (c Config) CheckPlainHTTP() error {
	if c.TLS.Enabled() || c.InsecureHTTP || c.Insecure || len(c.TrustedProxies) > 0 || LoopbackListen(c.Listen) {
		return nil
	}
	return fmt.Errorf("%w: %q is not a loopback address; set tls.cert_file and tls.key_file, declare a TLS-terminating proxy in trusted_proxies, or pass --insecure-http", ErrPlainHTTP, c.Listen)
}

// LoopbackListen reports whether addr is on loopback (an address that
// does not parse is left to net.Listen to report).
func LoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// TLS configures HTTPS on the API; without CertFile landlord serves plain
// HTTP.
type TLS struct {
	// CertFile and KeyFile are the served certificate (PEM, the chain
	// after the leaf) and its key; both or neither. landlord reads them
	// again when they change, without a restart.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ClientCAFile, if set, is the PEM bundle that client certificates are
	// verified against.
	ClientCAFile string `yaml:"client_ca_file"`
	// ClientAuth is require or verify_if_given (the default once
	// ClientCAFile is set).
	ClientAuth string `yaml:"client_auth"`
	// ClientRoles map verified client certificates to roles, like tokens.
	ClientRoles []ClientRole `yaml:"client_roles"`
}

// ClientRole maps a client certificate, by its subject common name or one
// of its SANs (DNS name, URI or email address), to a role; Name is the
// actor recorded in the history.
type ClientRole struct {
	Subject string `yaml:"subject"`
	SAN     string `yaml:"san"`
	Role    string `yaml:"role"`
	Name    string `yaml:"name"`
}

// Client authentication modes of TLS.ClientAuth.
const (
	ClientAuthRequire       = "require"
	ClientAuthVerifyIfGiven = "verify_if_given"
)

// Enabled reports whether the API serves HTTPS.
func (t TLS) Enabled() bool { return t.CertFile != "" }

// validate reports every problem of the tls block.
func (t TLS) validate() []error {
	var errs []error
	if (t.CertFile == "") != (t.KeyFile == "") {
		errs = append(errs, errors.New("tls.cert_file and tls.key_file go together: set both or neither"))
	}
	if t.ClientCAFile != "" && t.CertFile == "" {
		errs = append(errs, errors.New("tls.client_ca_file needs tls.cert_file and tls.key_file"))
	}
	switch t.ClientAuth {
	case "":
	case ClientAuthRequire, ClientAuthVerifyIfGiven:
		if t.ClientCAFile == "" {
			errs = append(errs, fmt.Errorf("tls.client_auth %s needs tls.client_ca_file", t.ClientAuth))
		}
	default:
		errs = append(errs, fmt.Errorf("tls.client_auth %q is not require or verify_if_given", t.ClientAuth))
	}
	if len(t.ClientRoles) > 0 && t.ClientCAFile == "" {
		errs = append(errs, errors.New("tls.client_roles needs tls.client_ca_file"))
	}
	for i, r := range t.ClientRoles {
		if r.Name == "" {
			errs = append(errs, fmt.Errorf("tls.client_roles[%d]: name is required", i))
		}
		if (r.Subject == "") == (r.SAN == "") {
			errs = append(errs, fmt.Errorf("tls.client_roles[%d] (%s): set one of subject or san", i, r.Name))
		}
		if r.Role != "admin" && r.Role != "reader" {
			errs = append(errs, fmt.Errorf("tls.client_roles[%d] (%s): role %q is not admin or reader", i, r.Name, r.Role))
		}
	}
	return errs
}

// Proxies parses TrustedProxies.
func (c Config) Proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	var errs []error
	for i, s := range c.TrustedProxies {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("trusted_proxies[%d]: %q is not a CIDR such as 10.0.0.0/8", i, s))
			continue
		}
		out = append(out, p.Masked())
	}
	return out, errors.Join(errs...)
}

// applyTLSEnv reads the LANDLORD_TLS_* and LANDLORD_INSECURE_HTTP
// variables.
func applyTLSEnv(cfg *Config, getenv func(string) string) error {
	for env, dst := range map[string]*string{
		"LANDLORD_TLS_CERT_FILE":      &cfg.TLS.CertFile,
		"LANDLORD_TLS_KEY_FILE":       &cfg.TLS.KeyFile,
		"LANDLORD_TLS_CLIENT_CA_FILE": &cfg.TLS.ClientCAFile,
		"LANDLORD_TLS_CLIENT_AUTH":    &cfg.TLS.ClientAuth,
	} {
		if v := getenv(env); v != "" {
			*dst = v
		}
	}
	if v := getenv("LANDLORD_INSECURE_HTTP"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("config: LANDLORD_INSECURE_HTTP=%q is not true or false", v)
		}
		cfg.InsecureHTTP = b
	}
	return nil
}
