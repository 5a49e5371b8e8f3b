package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestSecretsAtRestEndToEnd runs the built binary: `landlord serve` on the
// mock provider with encryption on keeps a tenant's secret out of its
// database file while the tenant runs; `landlord secrets rotate` moves it
// to a new key beside the running server; the old key can then go; and a
// server without the key refuses to read the tenant rather than pass its
// ciphertext on.
func TestSecretsAtRestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const secret = "e2e-hunter2-secret"
	keyDir := t.TempDir()
	k1 := filepath.Join(keyDir, "k1.key")
	if err := os.WriteFile(k1, []byte(testKey(1)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keyEnv := "LANDLORD_TEST_KEY_K2=" + testKey(2)
	configWith := func(encryption string) string {
		return "compute:\n  mock: {}\ncontroller: {resync: 1s, poll_interval: 100ms}\n" + encryption
	}
	p := servetest.New(t, servetest.Options{Env: []string{keyEnv},
		Config: configWith("encryption:\n  keys: [{id: k1, file: " + k1 + "}]\n")})
	setConfig := func(encryption string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(p.Dir(), "landlord.yaml"), []byte(configWith(encryption)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	restart := func() {
		t.Helper()
		p.Stop()
		p.Start()
	}
	db := filepath.Join(p.Dir(), "landlord.db")
	// atRest fails the test when the database files hold the secret, and
	// returns what they hold.
	atRest := func(secrets ...string) string {
		t.Helper()
		var all []byte
		for _, f := range []string{db, db + "-wal"} {
			b, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		for _, s := range secrets {
			if bytes.Contains(all, []byte(s)) {
				t.Errorf("the database files hold the secret %q", s)
			}
		}
		return string(all)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	waitReady := func(name string) *client.Tenant {
		t.Helper()
		tn, err := p.Client().Tenants().Wait(ctx, name, client.UntilReady, nil)
		if err != nil {
			t.Fatalf("wait for %s: %v", name, err)
		}
		return tn
	}

	p.Start()
	tenants := p.Client().Tenants()
	config := json.RawMessage(`{"image":"example.com/app:1","secrets":{"DB_PASSWORD":"` + secret + `"}}`)
	tn := servetest.CreateTenant(ctx, t, tenants, "acme", config)
	if strings.Contains(string(tn.ComputeConfig), secret) || !strings.Contains(string(tn.ComputeConfig), "[redacted]") {
		t.Errorf("the API returned %s", tn.ComputeConfig)
	}
	tn = waitReady("acme")
	if files := atRest(secret); !strings.Contains(files, `"llsec:v1:k1:`) {
		t.Errorf("the database files hold no value sealed with k1")
	}

	// A string that would read back as a sealed value is refused where it
	// is, through the API.
	_, err := tenants.Create(ctx, client.CreateTenantRequest{Name: "copied", ComputeConfig: json.RawMessage(`{"image":"example.com/app:1","env":{"X":"llsec:v1:k1:AAAA"}}`)}, client.CreateOptions{})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 422 || !strings.Contains(err.Error(), "/compute_config/env/X") {
		t.Errorf("a create with a sealed-looking env value = %v; want a 422 at /compute_config/env/X", err)
	}

	// A PUT of the config as read (its secret "[redacted]") changes
	// nothing: sealing with a fresh nonce does not make it a change.
	same, err := tenants.Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: tn.ComputeConfig}, client.UpdateOptions{IfMatch: tn.Version})
	if err != nil || same.Version != tn.Version || same.Generation != tn.Generation {
		t.Fatalf("a PUT that changes nothing = %+v, %v; want version %d", same, err, tn.Version)
	}

	// Rotate to k2 beside the running server, which has both keys.
	setConfig("encryption:\n  primary: k2\n  keys: [{id: k1, file: " + k1 + "}, {id: k2, env: LANDLORD_TEST_KEY_K2}]\n")
	restart()
	rotate := exec.CommandContext(ctx, servetest.Binary(t), "secrets", "rotate", "--config", filepath.Join(p.Dir(), "landlord.yaml"), "--database", db)
	rotate.Env = append(os.Environ(), keyEnv)
	out, err := rotate.CombinedOutput()
	if err != nil {
		t.Fatalf("landlord secrets rotate: %v\n%s", err, out)
	}
	mustContain(t, "landlord secrets rotate", squeeze(string(out)), "tenants read (deleted ones included): 1", "values sealed again with k2: 1")
	if stored := storedConfigs(t, db); strings.Contains(stored, `"llsec:v1:k1:`) || !strings.Contains(stored, `"llsec:v1:k2:`) || strings.Contains(stored, secret) {
		t.Errorf("after rotation the database holds %s", stored)
	}

	// k1 goes; the tenant reads and runs, and takes a new secret.
	setConfig("encryption:\n  keys: [{id: k2, env: LANDLORD_TEST_KEY_K2}]\n")
	restart()
	tn = waitReady("acme")
	changed := json.RawMessage(`{"image":"example.com/app:1","secrets":{"DB_PASSWORD":"` + secret + `-2"}}`)
	if _, err := tenants.Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: changed}, client.UpdateOptions{IfMatch: tn.Version}); err != nil {
		t.Fatal(err)
	}
	if tn = waitReady("acme"); tn.ObservedGeneration != 2 {
		t.Errorf("observed generation %d after the change, want 2", tn.ObservedGeneration)
	}
	p.Stop() // checkpoints the log into the database file
	atRest(secret, secret+"-2")

	// Without the key, the tenant is refused, and the log says which key
	// to configure.
	setConfig("")
	p.Start()
	var unreadable *client.Error
	if _, err := tenants.Get(ctx, "acme", client.GetOptions{}); !errors.As(err, &unreadable) ||
		unreadable.Status != http.StatusServiceUnavailable || unreadable.Problem.Code != "secret_unreadable" || strings.Contains(err.Error(), `"k2"`) {
		t.Errorf("a read of the tenant by a server without its key: %v; want a 503 secret_unreadable that leaves the key to the log", err)
	}
	// The process's output reaches the log through a pipe: wait for it.
	poll.Until(t, "the log names the missing key and encryption.keys", 10*time.Second, func() (bool, string) {
		log := p.Log()
		return strings.Contains(log, `not configured: \"k2\"`) && strings.Contains(log, "add it to encryption.keys"), "\n" + log
	})
}
