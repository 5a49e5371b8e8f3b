package tenant

import (
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// Partitions is how many partitions the tenants are divided into, so that
// replicas sharing a database can share the controller's work: each
// partition has a lease (PartitionLease), and the replica holding it
// reconciles the partition's tenants and fences its writes to them with the
// lease's epoch (FenceLease).
//
// Every replica sharing a database must agree on it, since it decides which
// lease fences a write to a tenant. It changes only with a release, and a
// release that changes it says so in its notes: replicas of both releases
// must not run together (stop them all, then start the new release).
const Partitions = 64

// Lease name prefixes: the partitions' leases and the members' leases (one
// per replica that takes part in the controller's work).
const (
	PartitionLeasePrefix = "controller/"
	MemberLeasePrefix    = "member/"
)

// PartitionOf is the partition of the tenant with that id: the 32-bit
// FNV-1a hash of the id, modulo Partitions. It never changes for an id.
func PartitionOf(tenantID string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(tenantID)) // a hash.Hash never fails to write
	return int(h.Sum32() % Partitions)
}

// PartitionLease is the name of partition p's lease ("controller/17").
func PartitionLease(p int) string { return PartitionLeasePrefix + strconv.Itoa(p) }

// ParsePartitionLease returns the partition a lease name names, and false
// when it names none (another kind of lease, or a partition out of range).
func ParsePartitionLease(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, PartitionLeasePrefix)
	if !ok {
		return 0, false
	}
	p, err := strconv.Atoi(rest)
	if err != nil || p < 0 || p >= Partitions || strconv.Itoa(p) != rest {
		return 0, false
	}
	return p, true
}

// PartitionHolders returns, for each partition, its lease among leases
// when that lease is live at now (by the clock that judges expiry: the
// database's), else nil.
func PartitionHolders(leases []Lease, now time.Time) []*Lease {
	out := make([]*Lease, Partitions)
	for i, l := range leases {
		if p, ok := ParsePartitionLease(l.Name); ok && l.ExpiresAt.After(now) {
			out[p] = &leases[i]
		}
	}
	return out
}

// MemberLease is the name of the member lease of the replica with that
// identity ("member/host:1234").
func MemberLease(identity string) string { return MemberLeasePrefix + identity }

// FenceLease names the lease whose epoch fences the controller's writes to
// the tenant with that id (Observation.Epoch, Event.Epoch): the lease of
// its partition, which the writer must hold at that epoch.
func FenceLease(tenantID string) string { return PartitionLease(PartitionOf(tenantID)) }
