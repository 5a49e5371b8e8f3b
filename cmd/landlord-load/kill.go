package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// The replica runs read the leases, which the API does not show, and the
// tenants' statuses at one moment straight from the database.
const (
	selectLiveLeases = `SELECT name, holder FROM leases WHERE expires_at > now()`
	countReady       = `SELECT count(*) FROM tenants WHERE status = 'ready' AND deleted_at IS NULL`
	selectStatuses   = `SELECT id::text, status FROM tenants WHERE deleted_at IS NULL`
)

// leaseSettleLimit bounds, in lease TTLs, how long waitLeasesSettled waits.
const leaseSettleLimit = 10

// liveLeases returns the holder of every lease that has not expired, by
// name.
func liveLeases(ctx context.Context, db *pgx.Conn) (map[string]string, error) {
	rows, err := db.Query(ctx, selectLiveLeases)
	if err != nil {
		return nil, fmt.Errorf("read the leases: %w", err)
	}
	out := map[string]string{}
	var name, holder string
	_, err = pgx.ForEachRow(rows, []any{&name, &holder}, func() error {
		out[name] = holder
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the leases: %w", err)
	}
	return out, nil
}

// waitLeasesSettled waits until no lease has changed hands for a lease TTL,
// so that replicas that share the controller's work have shared it out
// before the first create. It gives up after leaseSettleLimit TTLs and
// says so in the run.
func (s *suite) waitLeasesSettled(ctx context.Context, db *pgx.Conn, run *ReplicaRun) error {
	start := time.Now()
	var last map[string]string
	stable := start
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		leases, err := liveLeases(ctx, db)
		if err != nil {
			return err
		}
		if !maps.Equal(leases, last) {
			last, stable = leases, time.Now()
		}
		switch {
		case time.Since(stable) >= s.opts.leaseTTL:
			run.LeasesSettledS = seconds(time.Since(start))
			return nil
		case time.Since(start) >= leaseSettleLimit*s.opts.leaseTTL:
			run.LeasesSettledS = seconds(time.Since(start))
			run.LeasesUnsettled = true
			s.say("%s: the leases still changed hands after %v; creating anyway", run.Name, time.Since(start).Round(time.Millisecond))
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// killOne waits until a third of the n tenants are ready, then kills with
// SIGKILL the replica that holds the fencing leases (tenant.FenceLease) of
// the most tenants not yet ready, and returns what it killed and those
// tenants, by id: the killed replica's share, which the others must take
// over.
func (s *suite) killOne(ctx context.Context, db *pgx.Conn, procs []*serverProcess, n int) (*Kill, map[string]bool, error) {
	tick := time.NewTicker(suitePoll)
	defer tick.Stop()
	for {
		var ready int
		if err := db.QueryRow(ctx, countReady).Scan(&ready); err != nil {
			return nil, nil, fmt.Errorf("count the tenants ready: %w", err)
		}
		if 3*ready >= n {
			break
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-tick.C:
		}
	}
	leases, err := liveLeases(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	rows, err := db.Query(ctx, selectStatuses)
	if err != nil {
		return nil, nil, fmt.Errorf("read the statuses: %w", err)
	}
	k := &Kill{}
	var pending []string
	var id, status string
	_, err = pgx.ForEachRow(rows, []any{&id, &status}, func() error {
		if status == client.StatusReady {
			k.ReadyAtKill++
		} else {
			pending = append(pending, id)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read the statuses: %w", err)
	}
	k.PendingAtKill = len(pending)
	// Share the pending tenants out by the holder of their fencing lease.
	shares := make([][]string, len(procs))
	for _, id := range pending {
		if i := holderIndex(procs, leases[tenant.FenceLease(id)]); i >= 0 {
			shares[i] = append(shares[i], id)
		}
	}
	victim := 0
	for i := range shares {
		if len(shares[i]) > len(shares[victim]) {
			victim = i
		}
	}
	if len(shares[victim]) == 0 {
		return nil, nil, fmt.Errorf("no replica holds the fencing lease of any of the %d tenants not ready (live leases: %v)", k.PendingAtKill, leases)
	}
	held := map[string]bool{}
	victims := map[string]bool{}
	for _, id := range shares[victim] {
		victims[id] = true
		held[tenant.FenceLease(id)] = true
	}
	k.Replica, k.PID, k.Tenants = victim+1, procs[victim].pid(), len(victims)
	k.Leases = slices.Sorted(maps.Keys(held))
	s.say("killing replica %d (pid %d): it holds the leases of %d of the %d tenants not ready (%d ready)", k.Replica, k.PID, k.Tenants, k.PendingAtKill, k.ReadyAtKill)
	k.at = procs[victim].kill()
	return k, victims, nil
}

// waitLeasesMoved waits until a replica other than the killed one holds
// each of the killed replica's leases, and returns when it saw that. It
// gives up after leaseSettleLimit lease TTLs.
func (s *suite) waitLeasesMoved(ctx context.Context, db *pgx.Conn, procs []*serverProcess, k *Kill) (time.Time, error) {
	tick := time.NewTicker(suitePoll)
	defer tick.Stop()
	limit := time.After(leaseSettleLimit * s.opts.leaseTTL)
	for {
		leases, err := liveLeases(ctx, db)
		if err != nil {
			return time.Time{}, err
		}
		moved := true
		for _, name := range k.Leases {
			if i := holderIndex(procs, leases[name]); i < 0 || i == k.Replica-1 {
				moved = false
				break
			}
		}
		if moved {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-limit:
			return time.Time{}, fmt.Errorf("the killed replica's %d leases were not all held by the others %v after the kill", len(k.Leases), leaseSettleLimit*s.opts.leaseTTL)
		case <-tick.C:
		}
	}
}

// holderIndex is the index of the replica whose identity (host:pid) is
// holder, or -1.
func holderIndex(procs []*serverProcess, holder string) int {
	for i, p := range procs {
		if p != nil && strings.HasSuffix(holder, ":"+strconv.Itoa(p.pid())) {
			return i
		}
	}
	return -1
}
