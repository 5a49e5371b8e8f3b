package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/jaxxstorm/landlord/internal/seal"
)

// Encryption configures the encryption at rest of tenants' secrets (the
// compute_config values their provider's schema marks writeOnly). Without
// keys, secrets are stored in plain text. See docs/storage.md.
type Encryption struct {
	// Primary is the id of the key that seals new values; it defaults to
	// the only key when there is one.
	Primary string `yaml:"primary"`
	// Keys are every key that may have sealed a stored value: the
	// primary and those being rotated away from.
	Keys []EncryptionKey `yaml:"keys"`
}

// EncryptionKey is one key: its id, stored beside every value it seals,
// and where its material is (32 random bytes, base64 or hex): a file or
// an environment variable.
type EncryptionKey struct {
	ID   string `yaml:"id"`
	File string `yaml:"file"`
	Env  string `yaml:"env"`
}

// Enabled reports whether keys are configured.
func (e Encryption) Enabled() bool { return len(e.Keys) > 0 }

// primary is the id of the key that seals: Primary, or the only key.
func (e Encryption) primary() string {
	if e.Primary == "" && len(e.Keys) == 1 {
		return e.Keys[0].ID
	}
	return e.Primary
}

// validate checks the block without reading any key, and returns every
// problem, each naming its key.
func (e Encryption) validate() []error {
	var errs []error
	seen := map[string]bool{}
	ids := make([]string, 0, len(e.Keys))
	for i, k := range e.Keys {
		at := fmt.Sprintf("encryption.keys[%d]", i)
		if k.ID != "" {
			at += " (" + k.ID + ")"
		}
		switch {
		case !seal.ValidKeyID(k.ID):
			errs = append(errs, fmt.Errorf("%s: id %q %s", at, k.ID, seal.KeyIDRule))
		case seen[k.ID]:
			errs = append(errs, fmt.Errorf("%s: id %q is given twice", at, k.ID))
		}
		seen[k.ID] = true
		ids = append(ids, k.ID)
		if (k.File == "") == (k.Env == "") {
			errs = append(errs, fmt.Errorf("%s: give exactly one of file (a path) and env (a variable's name)", at))
		}
	}
	switch {
	case len(e.Keys) == 0 && e.Primary != "":
		errs = append(errs, fmt.Errorf("encryption.primary is %q but encryption.keys is empty", e.Primary))
	case len(e.Keys) > 1 && e.Primary == "":
		errs = append(errs, fmt.Errorf("encryption.primary is required with several keys: the id of the one that seals (%s)", strings.Join(ids, ", ")))
	case e.Primary != "" && !seen[e.Primary]:
		errs = append(errs, fmt.Errorf("encryption.primary %q is not the id of one of encryption.keys (%s)", e.Primary, strings.Join(ids, ", ")))
	}
	return errs
}

// Keyring reads every key's material, from its file or from getenv, and
// returns the keyring; an empty one when no keys are configured. Every
// problem is reported at once, naming its key, never quoting material. A
// key file that others than its owner may read is used, with a warning
// to log: it should be 0400 or 0600.
func (e Encryption) Keyring(getenv func(string) string, log *slog.Logger) (*seal.Keyring, error) {
	if errs := e.validate(); len(errs) > 0 {
		return nil, fmt.Errorf("config: %w", errors.Join(errs...))
	}
	var (
		keys []seal.Key
		errs []error
	)
	for i, k := range e.Keys {
		at := fmt.Sprintf("encryption.keys[%d] (%s)", i, k.ID)
		var text []byte
		switch {
		case k.File != "":
			b, err := os.ReadFile(k.File)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", at, err))
				continue
			}
			if fi, err := os.Stat(k.File); err == nil && fi.Mode().Perm()&0o077 != 0 && log != nil {
				log.Warn("an encryption key file may be read by others than its owner; chmod 600 it",
					slog.String("key", k.ID), slog.String("file", k.File), slog.String("mode", fi.Mode().Perm().String()))
			}
			text = b
			at += ": file " + k.File
		default:
			text = []byte(getenv(k.Env))
			if len(text) == 0 {
				errs = append(errs, fmt.Errorf("%s: the environment variable %s is empty or not set", at, k.Env))
				continue
			}
			at += ": environment variable " + k.Env
		}
		material, err := seal.ParseKey(text)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			continue
		}
		keys = append(keys, seal.Key{ID: k.ID, Material: material})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	ring, err := seal.NewKeyring(e.primary(), keys...)
	if err != nil {
		return nil, fmt.Errorf("config: encryption: %w", err)
	}
	return ring, nil
}
