package seal_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// schemas is a Schemas of fixed schemas by provider.
type schemas map[string]*compute.Schema

func (s schemas) Schema(provider string) (*compute.Schema, error) {
	if sc, ok := s[provider]; ok {
		return sc, nil
	}
	return nil, &compute.ProviderNotFoundError{Name: provider}
}

// testSchemas has "mock": the workload (secrets of the main container and
// sidecars) plus a secret object and a secret number.
func testSchemas(t testing.TB) schemas {
	t.Helper()
	raw, err := workload.Schema("mock", map[string]json.RawMessage{
		"credentials": json.RawMessage(`{"type": "object", "writeOnly": true}`),
		"pin":         json.RawMessage(`{"type": "integer", "writeOnly": true}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := compute.CompileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	return schemas{"mock": s}
}

const tenantID = "0190c4a5-1f2e-7c3d-8b4a-5e6f7a8b9c0d"

const config = `{"image":"example.com/app:1","env":{"MODE":"a<b&c"},"secrets":{"DB":"hunter2","API":"s3cr3t"},` +
	`"sidecars":[{"name":"proxy","image":"example.com/proxy:1","secrets":{"TOKEN":"t0k3n"}}],` +
	`"credentials":{"user":"u","password":"pa55"},"pin":1234}`

// plaintexts are the secrets of config, as they appear in its text.
var plaintexts = []string{"hunter2", "s3cr3t", "t0k3n", "pa55", "1234"}

func mustConfigs(t testing.TB, primary string, keys ...seal.Key) *seal.Configs {
	t.Helper()
	return seal.NewConfigs(mustKeyring(t, primary, keys...), testSchemas(t))
}

// sameJSON fails t unless a and b are the same JSON value.
func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v: %s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func TestConfigsSealOpen(t *testing.T) {
	c := mustConfigs(t, "k1", newKey("k1"))
	sealed, err := c.Seal(tenantID, "mock", json.RawMessage(config))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plaintexts {
		if strings.Contains(string(sealed), p) {
			t.Errorf("the sealed config holds %q: %s", p, sealed)
		}
	}
	if n := strings.Count(string(sealed), `"llsec:v1:k1:`); n != 5 {
		t.Errorf("%d sealed values, want 5: %s", n, sealed)
	}
	for _, kept := range []string{`"image":"example.com/app:1"`, `"MODE":"a<b&c"`, `"name":"proxy"`} {
		if !strings.Contains(string(sealed), kept) {
			t.Errorf("the sealed config lost %s: %s", kept, sealed)
		}
	}
	opened, err := c.Open(tenantID, sealed)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "opened", opened, []byte(config))

	// Opening needs the key, not the schema: a Configs with no schemas
	// opens it too.
	bare := seal.NewConfigs(mustKeyring(t, "", newKey("k1")), schemas{})
	if opened, err := bare.Open(tenantID, sealed); err != nil {
		t.Errorf("Open without schemas: %v", err)
	} else {
		sameJSON(t, "opened without schemas", opened, []byte(config))
	}

	// A config without secrets, and any config read without sealed values,
	// is returned as it is.
	plain := json.RawMessage(`{"image":"a","env":{"A":"1"}}`)
	if got, err := c.Seal(tenantID, "mock", plain); err != nil || string(got) != string(plain) {
		t.Errorf("Seal of a config without secrets = %s, %v", got, err)
	}
	if got, err := c.Open(tenantID, json.RawMessage(config)); err != nil || string(got) != config {
		t.Errorf("Open of a plain config = %s, %v", got, err)
	}
}

// A sealed value is bound to its tenant and its place.
func TestConfigsSealedValuesCannotMove(t *testing.T) {
	c := mustConfigs(t, "k1", newKey("k1"))
	sealed, err := c.Seal(tenantID, "mock", json.RawMessage(`{"image":"a","secrets":{"A":"one","B":"two"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Secrets map[string]string `json:"secrets"`
	}
	if err := json.Unmarshal(sealed, &doc); err != nil {
		t.Fatal(err)
	}
	swapped := fmt.Sprintf(`{"image":"a","secrets":{"A":%q,"B":%q}}`, doc.Secrets["B"], doc.Secrets["A"])
	_, err = c.Open(tenantID, json.RawMessage(swapped))
	if !errors.Is(err, seal.ErrDecrypt) || !strings.Contains(err.Error(), tenantID) || !strings.Contains(err.Error(), "/secrets/") {
		t.Errorf("Open of swapped fields = %v, want ErrDecrypt naming the tenant and field", err)
	}
	if _, err := c.Open("0190c4a5-0000-7000-8000-000000000000", sealed); !errors.Is(err, seal.ErrDecrypt) {
		t.Errorf("Open as another tenant = %v, want ErrDecrypt", err)
	}
}

// Without a key, configs are stored as they are, and a sealed value is an
// error that says which key to configure: never ciphertext passed on.
func TestConfigsWithoutKeys(t *testing.T) {
	sealed, err := mustConfigs(t, "k1", newKey("k1")).Seal(tenantID, "mock", json.RawMessage(config))
	if err != nil {
		t.Fatal(err)
	}
	none := mustConfigs(t, "")
	if got, err := none.Seal(tenantID, "mock", json.RawMessage(config)); err != nil || string(got) != config {
		t.Errorf("Seal without keys = %s, %v; want the config as it is", got, err)
	}
	got, err := none.Open(tenantID, sealed)
	if !errors.Is(err, seal.ErrUnknownKey) || got != nil {
		t.Fatalf("Open without keys = %s, %v; want ErrUnknownKey", got, err)
	}
	for _, want := range []string{tenantID, `"k1"`, "encryption.keys"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %s", err, want)
		}
	}
}

// A string that would read back as a sealed value is refused at its
// pointer, a secret too: sealed, it would read back as itself, but stored in
// plain text (rotate --decrypt) it would read as a sealed value that does
// not open.
func TestConfigsRefuseReservedStrings(t *testing.T) {
	withKey, none := mustConfigs(t, "k1", newKey("k1")), mustConfigs(t, "")
	tests := []struct {
		name    string
		configs *seal.Configs
		config  string
		at      string // "" means accepted
	}{
		{"in env", withKey, `{"image":"a","env":{"A":"llsec:v1:k1:abc"}}`, "/env/A"},
		{"spelled with an escape", withKey, `{"image":"a","env":{"A":"\u006clsec:v1:k1:abc"}}`, "/env/A"},
		{"without keys", none, `{"image":"a","args":["llsec:x"]}`, "/args/0"},
		{"a secret without keys", none, `{"image":"a","secrets":{"A":"llsec:x"}}`, "/secrets/A"},
		{"a secret, with a key", withKey, `{"image":"a","secrets":{"A":"llsec:x"}}`, "/secrets/A"},
		{"inside a string", withKey, `{"image":"a","env":{"A":"x llsec:y"}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.configs.Seal(tenantID, "mock", json.RawMessage(tt.config))
			if tt.at == "" {
				if err != nil {
					t.Fatalf("Seal = %v", err)
				}
				opened, err := tt.configs.Open(tenantID, got)
				if err != nil {
					t.Fatal(err)
				}
				sameJSON(t, "opened", opened, []byte(tt.config))
				return
			}
			want := []violation.Violation{{Pointer: tt.at, Message: `begins with "llsec:", which landlord keeps for the secrets it seals; a value may not begin so`}}
			if !errors.Is(err, provider.ErrInvalidSpec) || !cmp.Equal(violation.Of(err), want) {
				t.Errorf("Seal = %s, %v; want a violation at %s", got, err, tt.at)
			}
		})
	}
}

func TestConfigsReseal(t *testing.T) {
	k1 := mustConfigs(t, "k1", newKey("k1"))
	sealed, err := k1.Seal(tenantID, "mock", json.RawMessage(config))
	if err != nil {
		t.Fatal(err)
	}
	// A secret stored before encryption was on, beside those sealed.
	var doc map[string]any
	if err := json.Unmarshal(sealed, &doc); err != nil {
		t.Fatal(err)
	}
	doc["secrets"].(map[string]any)["OLD"] = "plain0ld"
	mixed, _ := json.Marshal(doc)
	want := strings.Replace(config, `"API":"s3cr3t"`, `"API":"s3cr3t","OLD":"plain0ld"`, 1)

	both := mustConfigs(t, "k2", newKey("k1"), newKey("k2"))
	rotated, n, err := both.Reseal(tenantID, "mock", mixed, false)
	if err != nil {
		t.Fatal(err)
	}
	if n != (seal.Counts{Resealed: 5, Sealed: 1}) {
		t.Errorf("counts = %+v, want 5 resealed, 1 sealed", n)
	}
	if strings.Contains(string(rotated), "k1:") || strings.Contains(string(rotated), "plain0ld") || strings.Count(string(rotated), "llsec:v1:k2:") != 6 {
		t.Errorf("rotated = %s", rotated)
	}
	k2 := mustConfigs(t, "k2", newKey("k2"))
	opened, err := k2.Open(tenantID, rotated)
	if err != nil {
		t.Fatalf("k2 alone cannot open the rotated config: %v", err)
	}
	sameJSON(t, "opened", opened, []byte(want))

	// Again: nothing to do.
	again, n, err := both.Reseal(tenantID, "mock", rotated, false)
	if err != nil || again != nil || n != (seal.Counts{Current: 6}) {
		t.Errorf("second Reseal = %s, %+v, %v; want nil, 6 current", again, n, err)
	}

	// Back to plain text.
	plain, n, err := k2.Reseal(tenantID, "mock", rotated, true)
	if err != nil || n != (seal.Counts{Opened: 6}) {
		t.Fatalf("Reseal to plain text = %+v, %v", n, err)
	}
	if strings.Contains(string(plain), "llsec:") {
		t.Errorf("decrypted = %s", plain)
	}
	sameJSON(t, "decrypted", plain, []byte(want))

	// A value the keyring cannot open stops the config's rotation.
	if _, _, err := k2.Reseal(tenantID, "mock", sealed, false); !errors.Is(err, seal.ErrUnknownKey) {
		t.Errorf("Reseal of values of a removed key = %v, want ErrUnknownKey", err)
	}

	// A provider whose schema is not known: sealed values are rotated, and
	// the error says that plain secrets could not be looked for.
	out, n, err := both.Reseal(tenantID, "gone", mixed, false)
	if !errors.Is(err, seal.ErrNoSchema) || n != (seal.Counts{Resealed: 5}) || !strings.Contains(string(out), "plain0ld") {
		t.Errorf("Reseal without a schema = %s, %+v, %v", out, n, err)
	}
}

func BenchmarkConfigs(b *testing.B) {
	c := mustConfigs(b, "k1", newKey("k1"))
	sealed, err := c.Seal(tenantID, "mock", json.RawMessage(config))
	if err != nil {
		b.Fatal(err)
	}
	plain := json.RawMessage(`{"image":"example.com/app:1","env":{"MODE":"a"},"ports":[{"container_port":8080}]}`)
	b.Run("Seal/5 secrets", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Seal(tenantID, "mock", json.RawMessage(config)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Open/5 secrets", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Open(tenantID, sealed); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Seal/no secrets", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Seal(tenantID, "mock", plain); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Open/no secrets", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Open(tenantID, plain); err != nil {
				b.Fatal(err)
			}
		}
	})
}
