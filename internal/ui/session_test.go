package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSealedSessions(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	s, err := newSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	sealed := s.seal(&session{Token: "tok", Name: "ops", Role: "admin", CSRF: "c", Expires: now.Add(time.Hour).Unix()})
	if got := s.open(sealed, now); got == nil || got.Token != "tok" || got.Name != "ops" {
		t.Fatalf("open: %+v", got)
	}
	if strings.Contains(sealed, "tok") {
		t.Error("the token is readable in the cookie")
	}
	if s.open(sealed, now.Add(2*time.Hour)) != nil {
		t.Error("an expired session opens")
	}
	tampered := []byte(sealed)
	tampered[len(tampered)/2] ^= 1
	if s.open(string(tampered), now) != nil {
		t.Error("a tampered cookie opens")
	}
	other, _ := newSealer(bytes.Repeat([]byte{8}, 32))
	if other.open(sealed, now) != nil {
		t.Error("a cookie opens under another install's key")
	}
	// A form's sealed secrets are not a session, and the other way round.
	if _, ok := s.openBytes(secretsAD, sealed); ok {
		t.Error("a session opens as a form's secrets")
	}
	if s.open(s.sealBytes(secretsAD, []byte(`{"c":"x","e":99999999999}`)), now) != nil {
		t.Error("a form's secrets open as a session")
	}
	if _, err := newSealer([]byte("short")); err == nil {
		t.Error("a short key is taken")
	}
}

func TestSafeNext(t *testing.T) {
	for next, want := range map[string]string{
		"/ui/tenants/acme":   "/ui/tenants/acme",
		"/ui/?status=failed": "/ui/?status=failed",
		"":                   "/ui/",
		"https://evil.test/": "/ui/",
		"//evil.test/ui/":    "/ui/",
		"/ui/\\evil":         "/ui/",
		"/api":               "/ui/",
		"/ui/\r\nSet-Cookie": "/ui/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

// YAML aliases are refused: a few hundred bytes of them stand for
// millions of values.
func TestRawRefusesAliases(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	if _, err := parseRaw(bomb); err == nil || !strings.Contains(err.Error(), "aliases") {
		t.Errorf("parseRaw of aliases: %v", err)
	}
	v, err := parseRaw("name: acme\ncompute_config: {image: nginx, ports: [{container_port: 80}], networking: {public: true}}\n")
	if err != nil || string(mustJSON(v)) != `{"name":"acme","compute_config":{"image":"nginx","ports":[{"container_port":80}],"networking":{"public":true}}}` {
		t.Errorf("parseRaw: %s, %v", mustJSON(v), err)
	}
}
