package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// testKey is the base64 of a key of 32 bytes b.
func testKey(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

// writeKeyConfig writes landlord.yaml in dir with an encryption block of
// keys (id → key file) whose primary key is primary, and returns its path.
func writeKeyConfig(t *testing.T, dir, primary string, keys ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("compute:\n  mock: {}\nencryption:\n  primary: " + primary + "\n  keys:\n")
	for _, id := range keys {
		file := filepath.Join(dir, id+".key")
		if err := os.WriteFile(file, []byte(testKey(id[len(id)-1])+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		b.WriteString("    - {id: " + id + ", file: " + file + "}\n")
	}
	path := filepath.Join(dir, "landlord.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sealedStore opens the SQLite database at db sealing with the keys of
// the configuration file path, as serve does, and the config schema of
// the mock provider, which the tenants of these tests use.
func sealedStore(t *testing.T, path, db string) *sqlite.Store {
	t.Helper()
	cfg, _, err := config.Load(path, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cfg.Encryption.Keyring(os.Getenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	mockProvider, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schemas := compute.NewRegistry()
	if err := schemas.Register(mockProvider); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), db, sqlite.Options{Sealer: seal.NewConfigs(keys, schemas)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// storedConfigs returns every tenant's compute_config as the database
// holds it.
func storedConfigs(t *testing.T, db string) string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var all string
	if err := conn.QueryRow(`SELECT group_concat(compute_config, char(10)) FROM tenants`).Scan(&all); err != nil {
		t.Fatal(err)
	}
	return all
}

// squeeze makes every run of spaces one, so that checks need not know
// the width of a table's columns.
func squeeze(s string) string {
	return regexp.MustCompile(` {2,}`).ReplaceAllString(s, " ")
}

func TestSecretsRotate(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "landlord.db")
	ctx := context.Background()

	// Tenants sealed with k1, one of them deleted, and one stored before
	// encryption was on.
	plain, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(s tenant.Store, name string) *tenant.Tenant {
		t.Helper()
		tn, err := s.Create(ctx, &tenant.Tenant{Name: name, Provider: "mock",
			ComputeConfig: json.RawMessage(`{"image":"example.com/app:1","secrets":{"DB_PASSWORD":"pw-` + name + `"}}`)}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return tn
	}
	create(plain, "old")
	plain.Close()
	k1 := sealedStore(t, writeKeyConfig(t, dir, "k1", "k1"), db)
	create(k1, "acme")
	gone := create(k1, "gone")
	if _, err := k1.RequestDeletion(ctx, gone.ID, 0, "test"); err != nil {
		t.Fatal(err)
	}
	k1.Close()

	path := writeKeyConfig(t, dir, "k2", "k1", "k2")
	args := []string{"secrets", "rotate", "--config", path, "--database", db}
	res := mustRunCLI(t, nil, 0, "", append(args, "--dry-run")...)
	mustContain(t, "dry run", squeeze(res.stdout), "dry run: nothing was written", "tenants read (deleted ones included): 3", "tenants to write:", "values sealed again with k2: 2", "secrets in plain text sealed with k2: 1")
	if stored := storedConfigs(t, db); strings.Contains(stored, ":k2:") || !strings.Contains(stored, "pw-old") {
		t.Fatalf("the dry run wrote:\n%s", stored)
	}

	res = mustRunCLI(t, nil, 0, "", args...)
	mustContain(t, "rotate", squeeze(res.stdout), "tenants written:", "values sealed again with k2: 2", "secrets in plain text sealed with k2: 1", "values already sealed with k2: 0")
	stored := storedConfigs(t, db)
	if strings.Contains(stored, ":k1:") || strings.Contains(stored, "pw-") || strings.Count(stored, "llsec:v1:k2:") != 3 {
		t.Errorf("after rotate the database holds:\n%s", stored)
	}
	res = mustRunCLI(t, nil, 0, "", args...)
	mustContain(t, "rotate again", squeeze(res.stdout), "values already sealed with k2: 3", "tenants written: 0")

	// k1 can go; every tenant reads with k2 alone.
	k2 := sealedStore(t, writeKeyConfig(t, dir, "k2", "k2"), db)
	for _, name := range []string{"old", "acme", "gone"} {
		tn, err := k2.Get(ctx, name, tenant.GetOptions{IncludeDeleted: true})
		if err != nil || !strings.Contains(string(tn.ComputeConfig), "pw-"+name) {
			t.Errorf("Get(%s) with k2 alone = %v, %v", name, tn, err)
		}
	}

	// A value sealed with a key the configuration lacks: the tenant is
	// named, the others are rotated, the exit code is 1.
	k3 := sealedStore(t, writeKeyConfig(t, dir, "k3", "k3"), db)
	create(k3, "third")
	k3.Close()
	res = mustRunCLI(t, nil, 1, "", "secrets", "rotate", "--config", writeKeyConfig(t, dir, "k4", "k2", "k4"), "--database", db)
	mustContain(t, "rotate without k3", squeeze(res.stdout), "values sealed again with k4: 3", "tenants that could not be rotated: 1")
	mustContain(t, "rotate without k3", res.stderr, `sealed with an encryption key that is not configured: "k3"`, "1 tenants could not be rotated")

	// Back to plain text, with every key.
	res = mustRunCLI(t, nil, 0, "", "secrets", "rotate", "--decrypt", "--config", writeKeyConfig(t, dir, "k4", "k3", "k4"), "--database", db)
	mustContain(t, "decrypt", squeeze(res.stdout), "values stored in plain text: 4")
	if stored := storedConfigs(t, db); strings.Contains(stored, "llsec:") {
		t.Errorf("after --decrypt the database holds:\n%s", stored)
	}
}

func TestSecretsRotateRefuses(t *testing.T) {
	dir := t.TempDir()
	noKeys := filepath.Join(dir, "none.yaml")
	if err := os.WriteFile(noKeys, []byte("compute:\n  mock: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badKey := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badKey, []byte("encryption:\n  keys: [{id: k1, env: LANDLORD_TEST_UNSET_KEY}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "landlord.db")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"secrets", "rotate", "--config", noKeys, "--database", db}, "the configuration has no encryption keys"},
		{[]string{"secrets", "rotate", "--config", badKey, "--database", db}, "encryption.keys[0] (k1): the environment variable LANDLORD_TEST_UNSET_KEY is empty or not set"},
		{[]string{"secrets", "rotate", "--config", writeKeyConfig(t, dir, "k1", "k1"), "--database", filepath.Join(dir, "typo.db")}, "no database at " + filepath.Join(dir, "typo.db")},
		{[]string{"secrets", "rotate", "extra"}, "unknown command"},
		{[]string{"secrets", "nope"}, "unknown command"},
	} {
		res := mustRunCLI(t, nil, exitUsage, "", tt.args...)
		mustContain(t, strings.Join(tt.args, " "), res.stderr, tt.want)
	}
}

func TestPrintRotationGolden(t *testing.T) {
	stats := seal.Stats{Tenants: 1200, Rewritten: 1150, Counts: seal.Counts{Current: 40, Resealed: 2250, Sealed: 60}}
	for name, opts := range map[string]seal.RotateOptions{
		"secrets_rotate":         {},
		"secrets_rotate_dry_run": {DryRun: true},
	} {
		var b bytes.Buffer
		printRotation(&b, stats, "k2", opts)
		checkGolden(t, name, b.Bytes())
	}
	var b bytes.Buffer
	printRotation(&b, seal.Stats{Tenants: 1200, Rewritten: 1150, Counts: seal.Counts{Opened: 2350}, Failed: []error{errors.New("x")}}, "", seal.RotateOptions{Decrypt: true})
	checkGolden(t, "secrets_rotate_decrypt", b.Bytes())
}

// serve stops before anything listens when a key cannot be read, and says
// which.
func TestServeRefusesUnreadableKeys(t *testing.T) {
	cfg := config.Defaults()
	cfg.Listen = servetest.FreeAddr(t)
	cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
	cfg.SetComputeDefault("mock")
	cfg.Encryption = config.Encryption{Keys: []config.EncryptionKey{{ID: "k1", Env: "LANDLORD_TEST_UNSET_KEY"}}}
	err := serve(context.Background(), cfg, "", &providertest.LogBuffer{})
	var coded *exitCodeError
	if !errors.As(err, &coded) || coded.code != exitUsage || !strings.Contains(err.Error(), "encryption.keys[0] (k1)") {
		t.Errorf("serve = %v, want a usage error naming the key", err)
	}
}
