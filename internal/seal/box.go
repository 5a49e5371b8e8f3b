package seal

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
)

// Prefix begins every sealed value; "llsec:" is kept for sealed values of
// any version, and a config may not hold another string that begins so.
const (
	Prefix   = "llsec:"
	prefixV1 = Prefix + "v1:"
)

// IsSealed reports whether s reads as a sealed value (of any version).
func IsSealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// KeyOf returns the id of the key that sealed s, a sealed value of a
// version this package reads.
func KeyOf(s string) (string, error) {
	kid, _, err := parse(s)
	return kid, err
}

// Seal seals plaintext with the primary key, bound to context (the same
// context must be given to Open), and returns the sealed value.
func (k *Keyring) Seal(plaintext, context []byte) (string, error) {
	aead, ok := k.aeads[k.primary]
	if !ok {
		return "", fmt.Errorf("%w: set encryption.primary (%s)", ErrNoPrimary, k.describe())
	}
	header := prefixV1 + k.primary + ":"
	out := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	rand.Read(out) // the nonce; crypto/rand never fails
	out = aead.Seal(out, out, plaintext, additional(header, context))
	return header + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open returns the plaintext of a sealed value s, sealed with context. It
// returns errors wrapping ErrMalformed, ErrUnknownKey (naming the key) or
// ErrDecrypt.
func (k *Keyring) Open(s string, context []byte) ([]byte, error) {
	kid, body, err := parse(s)
	if err != nil {
		return nil, err
	}
	aead, ok := k.aeads[kid]
	if !ok {
		return nil, fmt.Errorf("%w: %q (%s); add it to encryption.keys to read this value", ErrUnknownKey, kid, k.describe())
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("%w: the data after the key id is not base64url of a nonce and a ciphertext", ErrMalformed)
	}
	nonce, sealed := raw[:aead.NonceSize()], raw[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, sealed, additional(s[:len(s)-len(body)], context))
	if err != nil {
		return nil, fmt.Errorf("%w with key %q: that key's material is not the one it was sealed with, or the value was altered or copied from another tenant or field", ErrDecrypt, kid)
	}
	return plain, nil
}

// parse splits a version 1 sealed value into its key id and its encoded
// nonce and ciphertext.
func parse(s string) (kid, body string, err error) {
	rest, ok := strings.CutPrefix(s, prefixV1)
	if !ok {
		if IsSealed(s) {
			return "", "", fmt.Errorf("%w: version %q is not one this landlord reads (v1); is a newer landlord writing to the database?", ErrMalformed, strings.SplitN(s[len(Prefix):], ":", 2)[0])
		}
		return "", "", fmt.Errorf("%w: it does not begin with %q", ErrMalformed, prefixV1)
	}
	kid, body, ok = strings.Cut(rest, ":")
	if !ok || !keyID.MatchString(kid) {
		return "", "", fmt.Errorf("%w: no key id after %q", ErrMalformed, prefixV1)
	}
	return kid, body, nil
}

// additional is the additional authenticated data of a value: its header
// (version and key id) and the context it was sealed in.
func additional(header string, context []byte) []byte {
	ad := make([]byte, 0, len(header)+1+len(context))
	ad = append(ad, header...)
	ad = append(ad, 0)
	return append(ad, context...)
}
