// Package computetest holds what landlord's own tests of providers share.
package computetest

import (
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Manager returns a compute.Manager over a registry of p alone, as a
// provider's own tests resolve specs through it.
func Manager(tb testing.TB, p provider.Provider, opts compute.ManagerOptions) *compute.Manager {
	tb.Helper()
	reg := compute.NewRegistry()
	if err := reg.Register(p); err != nil {
		tb.Fatalf("register provider %s: %v", p.Name(), err)
	}
	m, err := compute.NewManager(reg, opts)
	if err != nil {
		tb.Fatalf("new manager: %v", err)
	}
	return m
}
