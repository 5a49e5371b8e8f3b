package controller_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("host-%d:%d", i, 1000+i*7)
	}
	return out
}

// Every member gets Partitions/n partitions or one more, and every
// replica computes the same assignment whatever the order of its list.
func TestAssignIsBalancedAndAgreed(t *testing.T) {
	if got := controller.Assign(nil); got != nil {
		t.Errorf("Assign(nil) = %v", got)
	}
	for n := 1; n <= 2*tenant.Partitions; n++ {
		ms := members(n)
		got := controller.Assign(ms)
		counts := map[string]int{}
		for p, m := range got {
			if m == "" {
				t.Fatalf("%d members: partition %d is assigned to nobody", n, p)
			}
			counts[m]++
		}
		for _, m := range ms {
			if c := counts[m]; c < tenant.Partitions/n || c > (tenant.Partitions+n-1)/n {
				t.Errorf("%d members: %s has %d partitions, want %d or %d", n, m, c, tenant.Partitions/n, (tenant.Partitions+n-1)/n)
			}
		}
		shuffled := append([]string(nil), ms...)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		shuffled = append(shuffled, ms[0]) // a duplicate changes nothing
		again := controller.Assign(shuffled)
		for p := range got {
			if got[p] != again[p] {
				t.Fatalf("%d members: partition %d goes to %s or %s depending on the order of the list", n, p, got[p], again[p])
			}
		}
	}
}

// A member that joins takes about its share, and one that leaves gives up
// its own and little more: a partition that changes hands has its in-flight
// work drained, so movement costs time.
func TestAssignMovesLittle(t *testing.T) {
	for n := 1; n <= 8; n++ {
		before := controller.Assign(members(n))
		after := controller.Assign(members(n + 1))
		moved := 0
		for p := range before {
			if before[p] != after[p] {
				moved++
			}
		}
		// The newcomer's share must move; allow as much again for the
		// capacity's ripples.
		share := tenant.Partitions / (n + 1)
		t.Logf("%d → %d members: %d partitions moved (the newcomer's share is %d)", n, n+1, moved, share)
		if moved > 2*share+2 {
			t.Errorf("%d → %d members: %d of %d partitions moved, want at most %d", n, n+1, moved, tenant.Partitions, 2*share+2)
		}
	}
}
