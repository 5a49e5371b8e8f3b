package provider

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// MinHashKeyLen is the shortest install key a provider accepts for the
// HMAC fingerprints it records on platform resources (labels, tags,
// annotations): readable by whoever may read the resource, an HMAC with a
// key of this length lets nobody test guesses of the secrets it covers.
const MinHashKeyLen = 16

// CheckHashKey refuses an install key shorter than MinHashKeyLen, for a
// provider's constructor.
func CheckHashKey(provider string, key []byte) error {
	if len(key) < MinHashKeyLen {
		return fmt.Errorf("%s: hash key is %d bytes, need at least %d: pass the install's secret key in Options.HashKey", provider, len(key), MinHashKeyLen)
	}
	return nil
}

// Fingerprint is the HMAC-SHA256 of b keyed with the install's key, in
// hex: what providers record on platform resources (and ConfigHash is), so
// that a fingerprint anyone may read lets nobody test guesses of a secret
// it covers.
func Fingerprint(key, b []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(b)
	return hex.EncodeToString(mac.Sum(nil))
}
