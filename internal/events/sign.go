package events

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Deliveries are signed by the Standard Webhooks scheme
// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
// the webhook-id, webhook-timestamp and webhook-signature headers, the
// signature "v1," and the base64 of HMAC-SHA256 over "id.timestamp.body"
// keyed with the secret's bytes; several signatures, space-separated, while
// secrets rotate.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"

	// SecretPrefix begins a secret as the scheme writes it: whsec_ and
	// the base64 of its bytes.
	SecretPrefix = "whsec_"
	// The scheme's bounds on a secret's bytes ("between 24 bytes (192
	// bits) and 64 bytes (512 bits)").
	MinSecretBytes = 24
	MaxSecretBytes = 64
)

// ErrSecret: a secret is not whsec_ and the base64 of 24 to 64 bytes.
var ErrSecret = errors.New("a secret is whsec_ and the base64 of 24 to 64 random bytes (landlord subscriptions create makes one)")

// SecretKey returns the HMAC key of a secret as the scheme writes it.
func SecretKey(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: it does not begin with %s", ErrSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: what follows %s is not standard base64", ErrSecret, SecretPrefix)
	}
	if len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return nil, fmt.Errorf("%w: it has %d bytes", ErrSecret, len(key))
	}
	return key, nil
}

// NewSecret returns a new random secret of 32 bytes, as the scheme writes
// it.
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // crypto/rand never fails
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sign returns the webhook-signature header of a message: one v1
// signature per key, space-separated.
func Sign(id string, at time.Time, body []byte, keys [][]byte) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	sigs := make([]string, len(keys))
	for i, key := range keys {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	}
	return strings.Join(sigs, " ")
}
