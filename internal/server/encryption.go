package server

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/seal"
)

// registrySchemas finds config schemas in the compute registry once the
// server has made it: the store, which seals with them, is opened first, since
// the providers are made with a key it keeps. Nothing is sealed before
// the API starts.
type registrySchemas struct {
	registry atomic.Pointer[compute.Registry]
}

// set makes r the registry schemas are found in.
func (s *registrySchemas) set(r *compute.Registry) { s.registry.Store(r) }

// Schema returns the config schema of the provider called name.
func (s *registrySchemas) Schema(name string) (*compute.Schema, error) {
	r := s.registry.Load()
	if r == nil {
		return nil, errors.New("server: the compute providers are not ready")
	}
	return r.Schema(name)
}

// encryptionSummary says in the start-up line how secrets are stored.
func encryptionSummary(keys *seal.Keyring) string {
	if keys.Primary() == "" {
		return "off: secrets are stored in plain text (encryption in docs/storage.md)"
	}
	return fmt.Sprintf("secrets sealed with key %s (keys: %s)", keys.Primary(), strings.Join(keys.IDs(), ", "))
}
