package config_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/seal"
)

func TestEncryptionKeyring(t *testing.T) {
	dir := t.TempDir()
	k1 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	k2 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	file := filepath.Join(dir, "k1.key")
	if err := os.WriteFile(file, []byte(k1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := write(t, "encryption:\n  primary: k2\n  keys:\n    - {id: k1, file: "+file+"}\n    - {id: k2, env: LANDLORD_TEST_K2}\n")
	cfg, _, err := config.Load(path, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	ring, err := cfg.Encryption.Keyring(env(map[string]string{"LANDLORD_TEST_K2": k2}), slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if ring.Primary() != "k2" || strings.Join(ring.IDs(), ",") != "k1,k2" {
		t.Errorf("keyring: primary %q, keys %v", ring.Primary(), ring.IDs())
	}
	if log.Len() != 0 {
		t.Errorf("a 0600 key file was warned about: %s", log.String())
	}

	// The only key is the primary one; a file others may read is warned
	// about, and used.
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	one := config.Encryption{Keys: []config.EncryptionKey{{ID: "k1", File: file}}}
	ring, err = one.Keyring(env(nil), slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil || ring.Primary() != "k1" {
		t.Fatalf("one key: %v, %v", ring, err)
	}
	if !strings.Contains(log.String(), "chmod 600") || !strings.Contains(log.String(), file) {
		t.Errorf("no warning about a key file others may read: %q", log.String())
	}
	if strings.Contains(log.String(), k1) {
		t.Error("the warning quotes the key")
	}

	// No block: an empty keyring.
	ring, err = config.Encryption{}.Keyring(env(nil), nil)
	if err != nil || ring.Primary() != "" || len(ring.IDs()) != 0 {
		t.Errorf("no encryption block: %v, %v", ring, err)
	}
}

// Every mistake is reported at once, naming the key; none quotes material.
func TestEncryptionRefusesMistakes(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short.key")
	if err := os.WriteFile(short, []byte("c2VjcmV0LXRvby1zaG9ydA=="), 0o600); err != nil { // "secret-too-short"
		t.Fatal(err)
	}
	tests := []struct {
		name string
		yaml string
		want []string // in Validate's error, else Keyring's
	}{
		{"static", `
encryption:
  primary: k9
  keys:
    - {id: "a:b", env: X}
    - {id: k1}
    - {id: k1, file: /x, env: Y}`, []string{
			`encryption.keys[0] (a:b): id "a:b" must be`,
			"encryption.keys[1] (k1): give exactly one of file",
			`encryption.keys[2] (k1): id "k1" is given twice`,
			"encryption.keys[2] (k1): give exactly one of file",
			`encryption.primary "k9" is not the id of one of encryption.keys (a:b, k1, k1)`,
		}},
		{"several keys, no primary", "encryption:\n  keys: [{id: k1, env: A}, {id: k2, env: B}]", []string{"encryption.primary is required with several keys: the id of the one that seals (k1, k2)"}},
		{"primary, no keys", "encryption: {primary: k1}", []string{`encryption.primary is "k1" but encryption.keys is empty`}},
		{"material", "encryption:\n  primary: k1\n  keys: [{id: k1, env: UNSET}, {id: k2, file: /nonexistent/k2.key}, {id: k3, file: " + short + "}]", []string{
			"encryption.keys[0] (k1): the environment variable UNSET is empty or not set",
			"encryption.keys[1] (k2): open /nonexistent/k2.key",
			"encryption.keys[2] (k3): file " + short + ": invalid encryption key: it decodes to 16 bytes, not 32",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := config.Load(write(t, tt.yaml), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			if err == nil {
				_, err = cfg.Encryption.Keyring(env(nil), nil)
				if !errors.Is(err, seal.ErrInvalidKey) && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("Keyring = %v", err)
				}
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "secret-too-short") || strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("the error quotes key material: %v", err)
			}
		})
	}
}
