package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/client"
)

// replicaResync is controller.resync of the replicas: longer than any run.
// The mock provider keeps its workloads in the memory of the replica that
// provisioned them, so a resync by another replica, after a kill or a
// handover, would find them missing and provision them again; the runs
// measure the handover, not the mock.
const replicaResync = time.Hour

// replicaConfig is the configuration of every replica.
func (o suiteOptions) replicaConfig() string {
	return fmt.Sprintf("log_level: info\ncompute:\n  default: mock\n  mock: {latency: %s}\ncontroller:\n  workers: %d\n  lease_ttl: %s\n  resync: %s\n",
		replicaLatency, o.workers, o.leaseTTL, replicaResync)
}

// replicaRuns runs 1 replica, then 3, then 3 of which one is killed, each
// on a new database of the cluster.
func (s *suite) replicaRuns(ctx context.Context) error {
	n := s.opts.tenants(replicaTenants)
	r := &Replicas{Tenants: n, LatencyMS: millis(replicaLatency), Workers: s.opts.workers,
		LeaseTTLS: s.opts.leaseTTL.Seconds(), ResyncS: replicaResync.Seconds(), Config: s.opts.replicaConfig()}
	s.rep.Replicas = r
	for _, spec := range []struct {
		replicas int
		kill     bool
	}{{1, false}, {3, false}, {3, true}} {
		run, err := s.replicaRun(ctx, spec.replicas, spec.kill, n)
		if run != nil {
			r.Runs = append(r.Runs, *run)
		}
		if err != nil {
			return err
		}
	}
	if one, three := r.Runs[0].ReadyFromFirstS, r.Runs[1].ReadyFromFirstS; three > 0 {
		x := math.Round(100*one/three) / 100
		r.SpeedUp = &x
	}
	return nil
}

// replicaRun creates n tenants through replicas servers sharing a new
// database and waits until all are ready; with kill, it kills one replica
// once the creates are done and a third of the tenants are ready. Then it
// checks every tenant's history.
func (s *suite) replicaRun(ctx context.Context, replicas int, kill bool, n int) (_ *ReplicaRun, err error) {
	run := &ReplicaRun{Name: replicaRunName(replicas, kill), Replicas: replicas, Tenants: n}
	name := fmt.Sprintf("replicas-%d", replicas)
	if kill {
		name += "-kill"
	}
	dbName := pgName(name)
	url, err := s.cluster.CreateDatabase(ctx, dbName)
	if err != nil {
		return nil, fmt.Errorf("suite: %s: %w", name, err)
	}
	defer s.dropDatabase(dbName)
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("suite: %s: connect to PostgreSQL: %w", name, err)
	}
	defer db.Close(context.Background())

	procs := make([]*serverProcess, replicas)
	killed := -1
	defer func() {
		for i, p := range procs {
			if p != nil && i != killed {
				if stopErr := p.stop(); stopErr != nil {
					err = errors.Join(err, fmt.Errorf("suite: %s: %w", name, stopErr))
				}
			}
		}
	}()
	tr := newTransport(suiteConcurrency + 4)
	clients := make([]*client.Client, replicas)
	for i := range replicas {
		spec := serverSpec{bin: s.opts.landlord, dir: s.dir, name: fmt.Sprintf("%s-%d", name, i+1), database: url, config: s.opts.replicaConfig()}
		p, err := startServer(ctx, spec)
		if err != nil {
			return run, fmt.Errorf("suite: %s: %w", name, err)
		}
		procs[i] = p
		run.PIDs = append(run.PIDs, p.pid())
		if clients[i], err = client.New(client.Config{Address: p.address, HTTPClient: tr.client()}); err != nil {
			return run, fmt.Errorf("suite: %s: %w", name, err)
		}
		s.say("%s: replica %d is landlord serve (pid %d) on %s, log %s", run.Name, i+1, p.pid(), p.address, p.logPath)
	}
	if replicas > 1 {
		if err := s.waitLeasesSettled(ctx, db, run); err != nil {
			return run, fmt.Errorf("suite: %s: %w", name, err)
		}
	}

	prefix := defaultPrefix()
	tenantName := options{prefix: prefix, tenants: n}.name
	var created tenantRefs
	s.say("%s: creating %d tenants with %d clients spread over the replicas", run.Name, n, suiteConcurrency)
	firstCreate := time.Now()
	run.Create = timed(ctx, n, suiteConcurrency, func(ctx context.Context, i int) error {
		t, err := clients[i%replicas].Tenants().Create(ctx, client.CreateTenantRequest{Name: tenantName(i), ComputeConfig: json.RawMessage(defaultConfig)}, client.CreateOptions{})
		if err != nil {
			return err
		}
		created.add(tenantRef{id: t.ID, name: t.Name})
		return nil
	})
	if ctx.Err() != nil {
		return run, ctx.Err()
	}

	var victims map[string]bool
	var killedAt time.Time
	if kill {
		k, v, err := s.killOne(ctx, db, procs, n)
		if err != nil {
			return run, fmt.Errorf("suite: %s: %w", name, err)
		}
		killed, victims, killedAt = k.Replica-1, v, k.at
		k.AtS = seconds(k.at.Sub(firstCreate))
		run.Kill = k
		moved, err := s.waitLeasesMoved(ctx, db, procs, k)
		if err != nil {
			return run, fmt.Errorf("suite: %s: %w", name, err)
		}
		k.LeasesMovedAfterS = seconds(moved.Sub(killedAt))
		s.say("%s: the killed replica's leases were all held by the others %.3fs after the kill", run.Name, k.LeasesMovedAfterS)
	}
	alive := 0
	if killed == 0 {
		alive = 1
	}
	if _, err := waitNone(ctx, clients[alive], client.ListOptions{NamePrefix: prefix, Statuses: notReady}, suitePoll); err != nil {
		return run, fmt.Errorf("suite: %s: wait until ready: %w", name, err)
	}
	run.ReadyFromFirstS = seconds(time.Since(firstCreate))
	s.say("%s: all ready %.3fs after the first create", run.Name, run.ReadyFromFirstS)

	for i, p := range procs {
		if i == killed {
			run.Provisions = append(run.Provisions, nil)
			continue
		}
		v, err := provisions(ctx, tr.client(), p.address)
		if err != nil {
			return run, fmt.Errorf("suite: %s: replica %d: %w", name, i+1, err)
		}
		run.Provisions = append(run.Provisions, &v)
	}
	h, err := checkHistories(ctx, clients[alive], prefix, created.all(), victims, killedAt)
	if err != nil {
		return run, fmt.Errorf("suite: %s: %w", name, err)
	}
	run.Ledger = h.ledger
	if k := run.Kill; k != nil {
		k.Tenants -= h.finished
		k.ResumedAfterS, k.ReadyAfterS = h.resumed, h.ready
		if k.Tenants == 0 {
			return run, fmt.Errorf("suite: %s: the killed replica had made its share ready before it died, so nothing was left to take over: create more tenants (--scale) or give the replicas fewer --workers", name)
		}
	}
	if run.Create.Errors > 0 {
		return run, fmt.Errorf("suite: %s: %d creates failed", name, run.Create.Errors)
	}
	return run, nil
}

func replicaRunName(replicas int, kill bool) string {
	switch {
	case kill:
		return fmt.Sprintf("%d replicas, one killed", replicas)
	case replicas == 1:
		return "1 replica"
	default:
		return fmt.Sprintf("%d replicas", replicas)
	}
}
