// Package providertest is the conformance suite every compute provider
// passes: one exported function, Run, that drives a provider through the
// contracts of provider.Provider (interface compliance, validation without
// side effects, idempotent Provision, Update and Destroy, live GetStatus,
// context cancellation, crash-safe naming, concurrency) in the spirit of
// Nomad's driver harness.
//
// A provider's own test calls it with a Harness:
//
//	func TestConformance(t *testing.T) {
//		p := newProvider(t)
//		providertest.Run(t, providertest.Harness{
//			Provider: p,
//			Config:   func(v int) json.RawMessage { … },
//		})
//	}
package providertest
