package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// KeySize is the size of a key in bytes: AES-256.
const KeySize = 32

// Key is one named key.
type Key struct {
	// ID names the key in every value it seals: 1 to 64 letters, digits,
	// '.', '_' or '-', starting with a letter or digit.
	ID string
	// Material is the key, KeySize random bytes.
	Material []byte
}

var keyID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidKeyID reports whether id can name a key (see Key.ID).
func ValidKeyID(id string) bool { return keyID.MatchString(id) }

// KeyIDRule says what a key id may be, for messages.
const KeyIDRule = "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"

// Keyring holds the keys that open sealed values, by id; the primary one
// seals. An empty Keyring seals nothing and opens nothing. A Keyring is
// safe for concurrent use.
type Keyring struct {
	primary string
	aeads   map[string]cipher.AEAD
}

// NewKeyring returns a keyring of keys whose primary key is the one with
// id primary; "" means none (the keyring only opens). Every problem is an
// error wrapping ErrInvalidKey; none quotes key material.
func NewKeyring(primary string, keys ...Key) (*Keyring, error) {
	k := &Keyring{primary: primary, aeads: make(map[string]cipher.AEAD, len(keys))}
	for _, key := range keys {
		if !ValidKeyID(key.ID) {
			return nil, fmt.Errorf("%w: id %q %s", ErrInvalidKey, key.ID, KeyIDRule)
		}
		if _, dup := k.aeads[key.ID]; dup {
			return nil, fmt.Errorf("%w: id %q is given twice", ErrInvalidKey, key.ID)
		}
		if len(key.Material) != KeySize {
			return nil, fmt.Errorf("%w: key %q has %d bytes; it must have %d", ErrInvalidKey, key.ID, len(key.Material), KeySize)
		}
		block, err := aes.NewCipher(key.Material)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q: %w", ErrInvalidKey, key.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q: %w", ErrInvalidKey, key.ID, err)
		}
		k.aeads[key.ID] = aead
	}
	if _, ok := k.aeads[primary]; primary != "" && !ok {
		return nil, fmt.Errorf("%w: the primary key %q is not one of the keys (%s)", ErrInvalidKey, primary, k.describe())
	}
	return k, nil
}

// Primary returns the id of the key that seals, or "" when there is none.
func (k *Keyring) Primary() string { return k.primary }

// IDs returns the ids of the keys, sorted.
func (k *Keyring) IDs() []string { return slices.Sorted(maps.Keys(k.aeads)) }

// describe lists the key ids for messages.
func (k *Keyring) describe() string {
	if len(k.aeads) == 0 {
		return "no keys are configured"
	}
	return fmt.Sprintf("configured: %v", k.IDs())
}

// ParseKey reads key material as an operator keeps it in a file or an
// environment variable: KeySize bytes in base64 (standard or URL
// alphabet, padded or not) or in hex, with surrounding white space
// ignored. Errors wrap ErrInvalidKey and never quote the text.
func ParseKey(text []byte) ([]byte, error) {
	text = bytes.TrimSpace(text)
	if len(text) == 2*KeySize {
		if key, err := hex.DecodeString(string(text)); err == nil {
			return key, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(string(text)); err == nil {
			if len(key) != KeySize {
				return nil, fmt.Errorf("%w: it decodes to %d bytes, not %d; make a key with: head -c 32 /dev/urandom | base64", ErrInvalidKey, len(key), KeySize)
			}
			return key, nil
		}
	}
	return nil, fmt.Errorf("%w: it is neither base64 nor hex of %d bytes (%d characters); make a key with: head -c 32 /dev/urandom | base64", ErrInvalidKey, KeySize, len(text))
}
