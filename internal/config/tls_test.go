package config

import (
	"strings"
	"testing"
)

func TestTLSValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		tls  TLS
		want []string
	}{
		{name: "none"},
		{name: "cert and key", tls: TLS{CertFile: "c", KeyFile: "k"}},
		{name: "cert alone", tls: TLS{CertFile: "c"}, want: []string{"tls.cert_file and tls.key_file go together"}},
		{name: "client CA without cert", tls: TLS{ClientCAFile: "ca"}, want: []string{"tls.client_ca_file needs tls.cert_file"}},
		{name: "bad client_auth", tls: TLS{CertFile: "c", KeyFile: "k", ClientCAFile: "ca", ClientAuth: "always"}, want: []string{`tls.client_auth "always"`}},
		{name: "client_auth without CA", tls: TLS{CertFile: "c", KeyFile: "k", ClientAuth: "require"}, want: []string{"tls.client_auth require needs tls.client_ca_file"}},
		{name: "bad roles", tls: TLS{CertFile: "c", KeyFile: "k", ClientCAFile: "ca", ClientRoles: []ClientRole{
			{Subject: "a", SAN: "b", Role: "admin", Name: "x"},
			{Role: "root"},
		}}, want: []string{"tls.client_roles[0] (x): set one of subject or san", "tls.client_roles[1]: name is required", `tls.client_roles[1] (): role "root"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Defaults()
			cfg.TLS = tt.tls
			wantValidate(t, cfg, tt.want)
		})
	}
}

func TestTLSEnvAndProxies(t *testing.T) {
	env := map[string]string{
		"LANDLORD_TLS_CERT_FILE":      "/c.pem",
		"LANDLORD_TLS_KEY_FILE":       "/k.pem",
		"LANDLORD_TLS_CLIENT_CA_FILE": "/ca.pem",
		"LANDLORD_TLS_CLIENT_AUTH":    "require",
		"LANDLORD_INSECURE_HTTP":      "true",
	}
	cfg, _, err := Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := TLS{CertFile: "/c.pem", KeyFile: "/k.pem", ClientCAFile: "/ca.pem", ClientAuth: "require"}
	if cfg.TLS.CertFile != want.CertFile || cfg.TLS.KeyFile != want.KeyFile || cfg.TLS.ClientCAFile != want.ClientCAFile || cfg.TLS.ClientAuth != want.ClientAuth || !cfg.InsecureHTTP {
		t.Errorf("Load = %+v insecure_http %v, want %+v and true", cfg.TLS, cfg.InsecureHTTP, want)
	}
	env["LANDLORD_INSECURE_HTTP"] = "maybe"
	if _, _, err := Load("", func(k string) string { return env[k] }); err == nil {
		t.Error("LANDLORD_INSECURE_HTTP=maybe was taken")
	}

	cfg = Defaults()
	cfg.TrustedProxies = []string{"10.0.0.0/8", "192.168.1.7/24", "proxy"}
	if _, err := cfg.Proxies(); err == nil || !strings.Contains(err.Error(), `trusted_proxies[2]: "proxy"`) {
		t.Errorf("Proxies = %v, want an error for trusted_proxies[2]", err)
	}
	cfg.TrustedProxies = cfg.TrustedProxies[:2]
	got, err := cfg.Proxies()
	if err != nil || len(got) != 2 || got[1].String() != "192.168.1.0/24" {
		t.Errorf("Proxies = %v, %v", got, err)
	}
}

// wantValidate checks that cfg.Validate says each of want, or nothing
// when want is empty.
func wantValidate(t *testing.T, cfg Config, want []string) {
	t.Helper()
	err := cfg.Validate()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("Validate = %v, want nil", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("Validate = nil, want %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate = %v, lacks %q", err, w)
		}
	}
}
