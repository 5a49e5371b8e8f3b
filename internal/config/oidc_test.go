package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOIDCValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		oidc OIDC
		want []string
	}{
		{name: "off"},
		{name: "on", oidc: OIDC{Issuer: "https://idp.example.com", Audience: "landlord", AdminGroups: []string{"platform"}}},
		{name: "audience without issuer", oidc: OIDC{Audience: "landlord"}, want: []string{"oidc.issuer is required"}},
		{name: "everything wrong", oidc: OIDC{Issuer: "http://idp.example.com", ClockSkew: 0}, want: []string{
			`oidc.issuer: "http://idp.example.com" is plain http`, "oidc.audience is required", "oidc.admin_groups or reader_groups is required",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Defaults()
			cfg.OIDC = tt.oidc
			wantValidate(t, cfg, tt.want)
		})
	}
}

func TestOIDCFileAndEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "landlord.yaml")
	file := `
oidc:
  issuer: https://idp.example.com/realms/ops
  audience: from-file
  groups_claim: roles
  admin_groups: [platform]
  reader_groups: [support, audit]
  actor_claim: email
  actor_prefix: "sso:"
  clock_skew: 2m
`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LANDLORD_OIDC_AUDIENCE": "landlord"}
	cfg, _, err := Load(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	v := cfg.OIDC.Verifier()
	if v.Issuer != "https://idp.example.com/realms/ops" || v.Audience != "landlord" || v.GroupsClaim != "roles" || v.ActorClaim != "email" || v.ActorPrefix != "sso:" ||
		v.ClockSkew != 2*time.Minute || len(v.ReaderGroups) != 2 || v.AdminGroups[0] != "platform" {
		t.Errorf("verifier config = %+v", v)
	}
	if err := os.WriteFile(path, []byte("oidc:\n  issuer: https://idp.example.com\n  groups: [a]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "groups") {
		t.Errorf("an unknown key in the oidc block: %v, want an error naming it", err)
	}
}
