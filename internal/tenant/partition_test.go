package tenant_test

import (
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// PartitionOf is a fixed function of the id: replicas of one release agree
// on it, and it spreads ids evenly enough that equal shares of the
// partitions are near-equal shares of the tenants.
func TestPartitionOf(t *testing.T) {
	// Pinned: a change here moves tenants between partitions, which
	// replicas of two releases would disagree on.
	for id, want := range map[string]int{
		"00000000-0000-0000-0000-000000000000": 17,
		"0193a0e0-7c1e-7000-8000-000000000001": 54,
		"":                                     int(2166136261 % tenant.Partitions), // FNV-1a's offset basis
	} {
		if got := tenant.PartitionOf(id); got != want {
			t.Errorf("PartitionOf(%q) = %d, want %d", id, got, want)
		}
	}
	counts := make([]int, tenant.Partitions)
	const n = 64_000
	for range n {
		p := tenant.PartitionOf(tenant.NewID())
		if p < 0 || p >= tenant.Partitions {
			t.Fatalf("partition %d out of range", p)
		}
		counts[p]++
	}
	mean := n / tenant.Partitions
	for p, c := range counts {
		if c < mean*3/4 || c > mean*5/4 {
			t.Errorf("partition %d has %d of %d ids; want within 25%% of %d", p, c, n, mean)
		}
	}
}

func TestPartitionLease(t *testing.T) {
	for p := range tenant.Partitions {
		got, ok := tenant.ParsePartitionLease(tenant.PartitionLease(p))
		if !ok || got != p {
			t.Errorf("ParsePartitionLease(%q) = %d, %v", tenant.PartitionLease(p), got, ok)
		}
	}
	for _, name := range []string{"controller", "controller/", "controller/64", "controller/-1", "controller/07", "member/controller/1", "controller/1x"} {
		if p, ok := tenant.ParsePartitionLease(name); ok {
			t.Errorf("ParsePartitionLease(%q) = %d, true; want false", name, p)
		}
	}
	id := tenant.NewID()
	if got, want := tenant.FenceLease(id), tenant.PartitionLease(tenant.PartitionOf(id)); got != want {
		t.Errorf("FenceLease(%s) = %q, want %q", id, got, want)
	}
}

func TestPartitionHolders(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	leases := []tenant.Lease{
		{Name: tenant.PartitionLease(3), Holder: "a", ExpiresAt: now.Add(time.Second)},
		{Name: tenant.PartitionLease(4), Holder: "b", ExpiresAt: now},                 // expired at now
		{Name: tenant.MemberLease("c"), Holder: "c", ExpiresAt: now.Add(time.Second)}, // not a partition
		{Name: tenant.PartitionLease(tenant.Partitions - 1), Holder: "d", ExpiresAt: now.Add(time.Hour)},
	}
	got := tenant.PartitionHolders(leases, now)
	if len(got) != tenant.Partitions {
		t.Fatalf("%d holders, want %d", len(got), tenant.Partitions)
	}
	for p, l := range got {
		want := map[int]string{3: "a", tenant.Partitions - 1: "d"}[p]
		switch {
		case want == "" && l != nil:
			t.Errorf("partition %d: held by %s, want none", p, l.Holder)
		case want != "" && (l == nil || l.Holder != want):
			t.Errorf("partition %d: %v, want held by %s", p, l, want)
		}
	}
}
