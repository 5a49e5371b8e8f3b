package oidc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/jaxxstorm/landlord/internal/identity"
)

// keySet holds the issuer's signing keys, fetched on demand.
type keySet struct {
	cfg Config

	mu      sync.Mutex
	jwksURL string            // resolved by discovery when not configured
	keys    []jose.JSONWebKey // the last keys fetched
	fetched time.Time         // when keys were fetched
	tried   time.Time         // when a fetch last began, or a failed one ended
	running chan struct{}     // closed when the running fetch ends; nil when none runs
	lastErr error             // the last fetch's failure, nil after a success
	gen     uint64            // counts successful fetches: a cached verdict is of one
}

// candidates returns the keys that may have signed a token with key id
// kid (any key when kid is empty).
//
// Keys are fetched when there are none yet, when they are older than
// MaxKeyAge, or when none has kid; never twice within MinRefresh of the
// end of a failed fetch or the start of any other. A request waits for a
// fetch only when no key it could use is at hand: keys past MaxKeyAge
// that match go on serving, at once, while the fetch runs in the
// background, up to MaxStaleKeyAge.
func (k *keySet) candidates(ctx context.Context, kid string) ([]jose.JSONWebKey, uint64, error) {
	k.mu.Lock()
	now := k.cfg.Now()
	found := match(k.usable(now), kid)
	k.maybeFetch(now, len(found) == 0)
	running := k.running
	if len(found) > 0 || running == nil {
		defer k.mu.Unlock()
		return k.result(now, kid)
	}
	k.mu.Unlock()
	if err := wait(ctx, running); err != nil {
		return nil, 0, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.result(k.cfg.Now(), kid)
}

// maybeFetch starts a fetch in the background when the keys are missing
// or older than MaxKeyAge, or when unknown (a token's key id is not among
// them), unless one runs or MinRefresh has not passed. k.mu is held.
func (k *keySet) maybeFetch(now time.Time, unknown bool) {
	stale := k.keys == nil || now.Sub(k.fetched) >= k.cfg.MaxKeyAge
	if (stale || unknown) && k.running == nil && now.Sub(k.tried) >= k.cfg.MinRefresh {
		k.start(now)
	}
}

// start starts a fetch in the background. k.mu is held, and no fetch runs.
func (k *keySet) start(now time.Time) {
	k.running = make(chan struct{})
	k.tried = now
	go k.fetch(k.running)
}

// generation returns the generation of the usable keys, false when there
// are none; like candidates, it starts a fetch when they are old.
func (k *keySet) generation() (uint64, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.cfg.Now()
	k.maybeFetch(now, false)
	return k.gen, k.usable(now) != nil
}

// newer returns every usable key, after a fetch when the keys are still
// of generation gen and MinRefresh allows one (or one runs).
func (k *keySet) newer(ctx context.Context, gen uint64) ([]jose.JSONWebKey, uint64, error) {
	k.mu.Lock()
	if k.gen == gen {
		k.maybeFetch(k.cfg.Now(), true)
	}
	running := k.running
	k.mu.Unlock()
	if running != nil {
		if err := wait(ctx, running); err != nil {
			return nil, 0, err
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.result(k.cfg.Now(), "")
}

// refresh waits for the running fetch, or runs one, and returns its
// failure.
func (k *keySet) refresh(ctx context.Context) error {
	k.mu.Lock()
	if k.running == nil {
		k.start(k.cfg.Now())
	}
	running := k.running
	k.mu.Unlock()
	if err := wait(ctx, running); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lastErr
}

// wait waits for a fetch to end, or ctx.
func wait(ctx context.Context, running <-chan struct{}) error {
	select {
	case <-running:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for the issuer's keys: %w", identity.ErrUnavailable, ctx.Err())
	}
}

// usable returns the keys, unless they are older than MaxStaleKeyAge: a
// key the issuer withdrew must not serve for ever because the issuer
// cannot be reached.
func (k *keySet) usable(now time.Time) []jose.JSONWebKey {
	if k.keys == nil || now.Sub(k.fetched) >= k.cfg.MaxStaleKeyAge {
		return nil
	}
	return k.keys
}

// result returns the usable keys with id kid, and the generation of the
// key set they are from. When the last fetch failed and none has that id,
// the token may be signed by a key the issuer published since: that is
// ErrUnavailable, not a bad token.
func (k *keySet) result(now time.Time, kid string) ([]jose.JSONWebKey, uint64, error) {
	found := match(k.usable(now), kid)
	if len(found) == 0 && k.lastErr != nil {
		return nil, 0, k.lastErr
	}
	return found, k.gen, nil
}

// fetch fetches the keys and closes done. It runs apart from any one
// request, so that a caller giving up does not fail the others waiting.
func (k *keySet) fetch(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultFetchTimeout)
	defer cancel()
	keys, err := k.load(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	defer close(done)
	k.running = nil
	if err != nil {
		// The next attempt waits MinRefresh from now, not from this
		// one's start: an issuer that hangs is asked once per
		// MinRefresh, not again as soon as its timeout ends.
		k.tried = k.cfg.Now()
		k.lastErr = fmt.Errorf("%w: %w", identity.ErrUnavailable, err)
		if k.keys != nil {
			k.cfg.Logger.Warn("oidc: fetching the issuer's keys failed; using the keys fetched before", "issuer", k.cfg.Issuer, "fetched", k.fetched, "err", err)
		} else {
			k.cfg.Logger.Error("oidc: fetching the issuer's keys failed", "issuer", k.cfg.Issuer, "err", err)
		}
		return
	}
	k.keys, k.fetched, k.lastErr = keys, k.cfg.Now(), nil
	k.gen++
	k.cfg.Logger.Info("oidc: fetched the issuer's keys", "issuer", k.cfg.Issuer, "keys", len(keys))
}

// load discovers the key set's URL, when needed, and fetches the keys.
func (k *keySet) load(ctx context.Context) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	u := k.jwksURL
	k.mu.Unlock()
	if u == "" {
		var err error
		if u, err = k.discover(ctx); err != nil {
			return nil, err
		}
		k.mu.Lock()
		k.jwksURL = u
		k.mu.Unlock()
	}
	var set jose.JSONWebKeySet
	if err := k.get(ctx, u, &set); err != nil {
		if k.cfg.JWKSURL == "" {
			// The provider may have moved its keys: discover them
			// again next time.
			k.mu.Lock()
			k.jwksURL = ""
			k.mu.Unlock()
		}
		return nil, fmt.Errorf("fetch the key set: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, key := range set.Keys {
		if key.IsPublic() && key.Valid() && (key.Use == "" || key.Use == "sig") {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("the key set at %s has no public signing key", u)
	}
	return keys, nil
}

// discover reads jwks_uri from the issuer's discovery document.
func (k *keySet) discover(ctx context.Context) (string, error) {
	u := strings.TrimSuffix(k.cfg.Issuer, "/") + "/.well-known/openid-configuration"
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := k.get(ctx, u, &doc); err != nil {
		return "", fmt.Errorf("discovery: %w", err)
	}
	if doc.Issuer != k.cfg.Issuer {
		return "", fmt.Errorf("discovery: %s names the issuer %q, not %q; set oidc.issuer to the issuer exactly as the provider names it", u, doc.Issuer, k.cfg.Issuer)
	}
	if doc.JWKSURI == "" {
		return "", fmt.Errorf("discovery: %s has no jwks_uri; set oidc.jwks_url", u)
	}
	if err := checkURL(doc.JWKSURI); err != nil {
		return "", fmt.Errorf("discovery: jwks_uri: %w", err)
	}
	return doc.JWKSURI, nil
}

// get fetches the JSON document at u into v.
func (k *keySet) get(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(b) > maxDocumentBytes {
		return fmt.Errorf("GET %s: the document is larger than %d bytes", u, maxDocumentBytes)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// match returns the keys with id kid, or every key when kid is empty.
func match(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	if kid == "" {
		return keys
	}
	var out []jose.JSONWebKey
	for _, k := range keys {
		if k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out
}
