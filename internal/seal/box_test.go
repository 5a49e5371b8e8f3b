package seal_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/seal"
)

func newKey(id string) seal.Key {
	return seal.Key{ID: id, Material: bytes.Repeat([]byte{id[len(id)-1]}, seal.KeySize)}
}

func mustKeyring(t testing.TB, primary string, keys ...seal.Key) *seal.Keyring {
	t.Helper()
	k, err := seal.NewKeyring(primary, keys...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k1 := mustKeyring(t, "k1", newKey("k1"))
	ctx := []byte("tenant\x00/secrets/DB")
	sealed, err := k1.Seal([]byte(`"hunter2"`), ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sealed, "llsec:v1:k1:") || strings.Contains(sealed, "hunter2") || !seal.IsSealed(sealed) {
		t.Fatalf("sealed = %q", sealed)
	}
	if kid, err := seal.KeyOf(sealed); kid != "k1" || err != nil {
		t.Errorf("KeyOf = %q, %v", kid, err)
	}
	again, _ := k1.Seal([]byte(`"hunter2"`), ctx)
	if again == sealed {
		t.Error("two seals of one value are equal: the nonce is not random")
	}
	plain, err := k1.Open(sealed, ctx)
	if err != nil || string(plain) != `"hunter2"` {
		t.Fatalf("Open = %q, %v", plain, err)
	}

	// A keyring that holds k1 among others opens it; one that does not
	// names the key it lacks.
	both := mustKeyring(t, "k2", newKey("k1"), newKey("k2"))
	if plain, err := both.Open(sealed, ctx); err != nil || string(plain) != `"hunter2"` {
		t.Errorf("Open with k1 and k2 = %q, %v", plain, err)
	}
	_, err = mustKeyring(t, "k2", newKey("k2")).Open(sealed, ctx)
	if !errors.Is(err, seal.ErrUnknownKey) || !strings.Contains(err.Error(), `"k1"`) || !strings.Contains(err.Error(), "encryption.keys") {
		t.Errorf("Open without k1 = %v, want ErrUnknownKey naming k1 and encryption.keys", err)
	}
	_, err = mustKeyring(t, "").Open(sealed, ctx)
	if !errors.Is(err, seal.ErrUnknownKey) || !strings.Contains(err.Error(), "no keys are configured") {
		t.Errorf("Open with no keys = %v", err)
	}

	body := sealed[len("llsec:v1:k1:"):]
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return "llsec:v1:k1:" + base64.RawURLEncoding.EncodeToString(b)
	}
	wrongMaterial := seal.Key{ID: "k1", Material: bytes.Repeat([]byte{9}, seal.KeySize)}
	for name, tt := range map[string]struct {
		keys    *seal.Keyring
		sealed  string
		context string
		want    error
	}{
		"another tenant":          {k1, sealed, "other\x00/secrets/DB", seal.ErrDecrypt},
		"another field":           {k1, sealed, "tenant\x00/secrets/DB2", seal.ErrDecrypt},
		"nonce changed":           {k1, flip(0), string(ctx), seal.ErrDecrypt},
		"ciphertext changed":      {k1, flip(13), string(ctx), seal.ErrDecrypt},
		"tag changed":             {k1, flip(len(raw) - 1), string(ctx), seal.ErrDecrypt},
		"key id changed":          {both, "llsec:v1:k2:" + body, string(ctx), seal.ErrDecrypt},
		"other material, same id": {mustKeyring(t, "k1", wrongMaterial), sealed, string(ctx), seal.ErrDecrypt},
		"truncated":               {k1, sealed[:30], string(ctx), seal.ErrMalformed},
		"not base64":              {k1, "llsec:v1:k1:!!!", string(ctx), seal.ErrMalformed},
		"no key id":               {k1, "llsec:v1:", string(ctx), seal.ErrMalformed},
		"unknown version":         {k1, "llsec:v9:k1:" + body, string(ctx), seal.ErrMalformed},
		"not sealed":              {k1, "hunter2", string(ctx), seal.ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			plain, err := tt.keys.Open(tt.sealed, []byte(tt.context))
			if !errors.Is(err, tt.want) {
				t.Errorf("Open = %q, %v; want %v", plain, err, tt.want)
			}
		})
	}
}

func TestSealWithoutPrimary(t *testing.T) {
	k := mustKeyring(t, "", newKey("k1"))
	if _, err := k.Seal([]byte(`"x"`), nil); !errors.Is(err, seal.ErrNoPrimary) {
		t.Errorf("Seal without a primary key = %v", err)
	}
}

func TestNewKeyringRefuses(t *testing.T) {
	for name, tt := range map[string]struct {
		primary string
		keys    []seal.Key
		want    string
	}{
		"primary not a key": {"k3", []seal.Key{newKey("k1")}, `primary key "k3" is not one of the keys`},
		"duplicate id":      {"k1", []seal.Key{newKey("k1"), newKey("k1")}, `"k1" is given twice`},
		"short key":         {"k1", []seal.Key{{ID: "k1", Material: make([]byte, 16)}}, "has 16 bytes; it must have 32"},
		"bad id":            {"", []seal.Key{{ID: "a:b", Material: make([]byte, 32)}}, `id "a:b" must be`},
		"empty id":          {"", []seal.Key{{ID: "", Material: make([]byte, 32)}}, `id "" must be`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := seal.NewKeyring(tt.primary, tt.keys...)
			if !errors.Is(err, seal.ErrInvalidKey) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewKeyring = %v, want ErrInvalidKey saying %q", err, tt.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	key := make([]byte, seal.KeySize)
	rand.Read(key)
	for name, text := range map[string]string{
		"base64 with newline": base64.StdEncoding.EncodeToString(key) + "\n",
		"raw base64":          base64.RawStdEncoding.EncodeToString(key),
		"base64url":           base64.URLEncoding.EncodeToString(key),
		"raw base64url":       "  " + base64.RawURLEncoding.EncodeToString(key),
		"hex":                 hex.EncodeToString(key) + "\r\n",
	} {
		got, err := seal.ParseKey([]byte(text))
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("%s: ParseKey = %x, %v", name, got, err)
		}
	}
	secret := "correct horse battery staple"
	for name, text := range map[string]string{
		"16 bytes":   base64.StdEncoding.EncodeToString(key[:16]),
		"passphrase": secret,
		"empty":      "",
	} {
		_, err := seal.ParseKey([]byte(text))
		if !errors.Is(err, seal.ErrInvalidKey) || strings.Contains(err.Error(), "horse") {
			t.Errorf("%s: ParseKey = %v, want ErrInvalidKey that does not quote the text", name, err)
		}
	}
}

func BenchmarkSeal(b *testing.B) {
	k := mustKeyring(b, "k1", newKey("k1"))
	plain, ctx := []byte(`"a database password of some length"`), []byte("0190c4a5-1f2e-7c3d-8b4a-5e6f7a8b9c0d\x00/secrets/DB_PASSWORD")
	for b.Loop() {
		if _, err := k.Seal(plain, ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	k := mustKeyring(b, "k1", newKey("k1"))
	ctx := []byte("0190c4a5-1f2e-7c3d-8b4a-5e6f7a8b9c0d\x00/secrets/DB_PASSWORD")
	sealed, _ := k.Seal([]byte(`"a database password of some length"`), ctx)
	for b.Loop() {
		if _, err := k.Open(sealed, ctx); err != nil {
			b.Fatal(err)
		}
	}
}
