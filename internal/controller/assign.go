package controller

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Assign returns, for each partition, the member that should hold it:
// every replica computes it from the same list of live members and gets the
// same answer, whatever the list's order.
//
// It is balanced: with n members, each is assigned Partitions/n partitions
// or one more (the members ranked first by a hash of their name take the
// remainder). Balance is what lets n replicas go about n times as fast as
// one. It moves little when a member joins or leaves: it is rendezvous
// hashing with capacity, which takes the (member, partition) pairs in order
// of a hash of both, highest first, and gives the partition to the member
// while both are free and the member has room, so that a partition stays
// with the member that ranks it highest unless that member is full.
//
// Assign returns nil when there are no members.
func Assign(members []string) []string {
	members = slices.Clone(members)
	slices.Sort(members)
	members = slices.Compact(members)
	n := len(members)
	if n == 0 {
		return nil
	}
	// Room: the remainder goes to the members whose own hash ranks first.
	byRank := slices.Clone(members)
	slices.SortFunc(byRank, func(a, b string) int {
		return cmp.Or(cmp.Compare(score(b, -1), score(a, -1)), cmp.Compare(a, b))
	})
	room := map[string]int{}
	for i, m := range byRank {
		room[m] = tenant.Partitions / n
		if i < tenant.Partitions%n {
			room[m]++
		}
	}
	type pair struct {
		member    string
		partition int
		score     uint64
	}
	pairs := make([]pair, 0, n*tenant.Partitions)
	for _, m := range members {
		for p := range tenant.Partitions {
			pairs = append(pairs, pair{m, p, score(m, p)})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.member, b.member), cmp.Compare(a.partition, b.partition))
	})
	out := make([]string, tenant.Partitions)
	left := tenant.Partitions
	for _, pr := range pairs {
		if out[pr.partition] != "" || room[pr.member] == 0 {
			continue
		}
		out[pr.partition] = pr.member
		room[pr.member]--
		if left--; left == 0 {
			break
		}
	}
	return out
}

// score is the rendezvous hash of a member and a partition (-1: of the
// member alone): FNV-1a, then a 64-bit finalizer (SplitMix64's), since
// FNV's last bytes barely reach its high bits.
func score(member string, partition int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(strconv.Itoa(partition)))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
