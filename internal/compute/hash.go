package compute

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
)

// Hash returns a fingerprint of everything in the spec that shapes the
// workload: containers, networking, secret values and the provider config,
// but not the tenant's identity or generation. Equal hashes mean an update
// has nothing to do. Providers record it on their resources to compare
// without reading secrets back.
func (s *TenantComputeSpec) Hash() string {
	type secret struct{ Container, Name, Value string }
	secrets := make([]secret, len(s.Secrets))
	for i, r := range s.Secrets {
		secrets[i] = secret{r.Container, r.Name, r.Value.Reveal()}
	}
	var config any
	if !isNull(s.ProviderConfig) {
		// Canonical form: whitespace and key order do not change the hash.
		dec := json.NewDecoder(bytes.NewReader(s.ProviderConfig))
		dec.UseNumber()
		if err := dec.Decode(&config); err != nil {
			config = string(s.ProviderConfig)
		}
	}
	b, _ := json.Marshal(struct {
		Containers []ContainerSpec
		Networking NetworkConfig
		Secrets    []secret
		Config     any
	}{s.Containers, s.Networking, secrets, config})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Clone returns a deep copy of the spec.
func (s *TenantComputeSpec) Clone() *TenantComputeSpec {
	if s == nil {
		return nil
	}
	out := *s
	out.Containers = make([]ContainerSpec, len(s.Containers))
	for i, c := range s.Containers {
		c.Command = slices.Clone(c.Command)
		c.Args = slices.Clone(c.Args)
		c.Env = maps.Clone(c.Env)
		c.Ports = slices.Clone(c.Ports)
		if c.HealthCheck != nil {
			hc := *c.HealthCheck
			hc.Command = slices.Clone(hc.Command)
			if hc.HTTP != nil {
				http := *hc.HTTP
				hc.HTTP = &http
			}
			if hc.TCP != nil {
				tcp := *hc.TCP
				hc.TCP = &tcp
			}
			c.HealthCheck = &hc
		}
		out.Containers[i] = c
	}
	out.Secrets = slices.Clone(s.Secrets)
	out.ProviderConfig = bytes.Clone(s.ProviderConfig)
	return &out
}
