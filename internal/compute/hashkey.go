package compute

import "fmt"

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
