package oidc

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/internal/identity"
)

// maxVerdicts bounds the tokens whose verdict is kept.
const maxVerdicts = 4096

// verdict is a token found good: who holds it, until when, checked with
// which generation of the key set.
type verdict struct {
	who    identity.Principal
	gen    uint64
	expiry time.Time
}

// verdicts keeps the tokens found good, by their SHA-256, so that a
// client's next requests with the same token skip the signature check
// (tens of microseconds for RS256). A verdict holds until the token
// expires, and only for the key set it was checked with: once the keys
// are fetched again, a token signed by a withdrawn key is refused.
type verdicts struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]verdict
}

// get returns the verdict of the token with sum, when it was made with
// key set gen and the token has not expired by notBefore (now less the
// clock skew).
func (c *verdicts) get(sum [sha256.Size]byte, gen uint64, notBefore time.Time) (identity.Principal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[sum]
	if !ok || v.gen != gen || notBefore.After(v.expiry) {
		return identity.Principal{}, false
	}
	return v.who, true
}

// put keeps v; when full, it drops every verdict first (they are cheap to
// make again).
func (c *verdicts) put(sum [sha256.Size]byte, v verdict) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxVerdicts {
		c.m = make(map[[sha256.Size]byte]verdict)
	}
	c.m[sum] = v
}
