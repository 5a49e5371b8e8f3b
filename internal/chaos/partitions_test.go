package chaos_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// replicasConfig runs three replicas' controllers over one database, each
// with 8 workers, on a mock provider whose every call takes 200 ms. The
// lease TTL is short so that a dead replica's partitions move within
// seconds; in production it is 15 s.
const (
	replicasConfig = `compute:
  default: mock
  mock:
    latency: 200ms
controller:
  workers: 8
  lease_ttl: 3s
  lease_renew: 600ms
`
	replicasTTL     = 3 * time.Second
	replicasTenants = 300
)

// TestReplicaKilledAmongThree runs three `landlord serve` replicas on one
// PostgreSQL database and checks that they share the partitions evenly;
// that when one is killed with SIGKILL while they provision, the others
// take its partitions over within a few TTLs (the figure is logged), stay
// ready all along, and bring every tenant to ready; and that no tenant was
// provisioned by two replicas, except one the dead replica provisioned and
// did not live to record, which its successor must provision again (each
// process's mock has a platform of its own). Then a replica stops
// gracefully, releases its partitions, and the last one takes them at once.
func TestReplicaKilledAmongThree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	db := pgtest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	leases, err := postgres.Open(ctx, db, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer leases.Close()

	procs := make([]*servetest.Process, 3)
	ids := make([]string, 3)
	for i := range procs {
		procs[i] = servetest.New(t, servetest.Options{Config: replicasConfig, Database: db})
		procs[i].Start()
	}
	for i, p := range procs {
		waitReady(ctx, t, p)
		ids[i] = identity(t, p)
	}
	waitHolders(ctx, t, leases, "the three replicas share the partitions evenly", balancedAmong(ids...))

	tenants := procs[0].Client().Tenants()
	var creates sync.WaitGroup
	sem := make(chan struct{}, 16)
	created := make([]string, replicasTenants)
	for i := range replicasTenants {
		creates.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			tn := servetest.CreateTenant(ctx, t, tenants, fmt.Sprintf("shard-%03d", i), json.RawMessage(`{"image": "app:1"}`))
			created[i] = tn.ID
		})
	}
	creates.Wait()
	readyAtKill := waitReadyCount(ctx, t, tenants, replicasTenants/4)

	victim, survivors := procs[2], procs[:2]
	before := holdersOf(ctx, t, leases)
	victim.Kill()
	killed := time.Now()
	unready := 0
	took := waitHolders(ctx, t, leases, "the survivors hold every partition", func(h []string) bool {
		for _, p := range survivors {
			if readyz(t, p.Addr()) != http.StatusOK {
				unready++
			}
		}
		return balancedAmong(ids[:2]...)(h)
	})
	t.Logf("replica killed with %d of %d tenants ready: its %d partitions were held by the survivors %v after the kill (lease TTL %v, renewed every %v)",
		readyAtKill, replicasTenants, count(before, ids[2]), took.Round(time.Millisecond), replicasTTL, replicasTTL/5)
	if took > 3*replicasTTL {
		t.Errorf("the dead replica's partitions moved %v after the kill; want within the TTL and a few renewals", took)
	}
	if unready > 0 {
		t.Errorf("a survivor's /readyz failed %d times during the takeover: no partition should lack a holder for a TTL", unready)
	}
	waitReadyCount(ctx, t, tenants, replicasTenants)
	t.Logf("all %d tenants ready %v after the kill", replicasTenants, time.Since(killed).Round(time.Millisecond))

	// Who provisioned what: the audit lines of each replica, and the actor
	// of each tenant's ready status.
	provisions := make([]map[string]int, 3)
	for i, p := range procs {
		provisions[i] = provisioned(t, p.Log())
	}
	redone := 0
	for _, id := range created {
		var readyBy []string
		for e, err := range tenants.AllEvents(ctx, id, llclient.EventOptions{}) {
			if err != nil {
				t.Fatalf("history of %s: %v", id, err)
			}
			if e.Type == string(tenant.EventStatus) && e.To == string(tenant.StatusReady) {
				readyBy = append(readyBy, e.Actor)
			}
		}
		if len(readyBy) != 1 {
			t.Errorf("tenant %s became ready %d times (%v), want once", id, len(readyBy), readyBy)
			continue
		}
		by := map[string]int{}
		total := 0
		for i := range procs {
			if n := provisions[i][id]; n > 0 {
				by[ids[i]] = n
				total += n
			}
		}
		switch {
		case total == 1 && by[readyBy[0]] == 1:
		case total == 2 && by[ids[2]] == 1 && by[readyBy[0]] == 1 && readyBy[0] != ids[2] && before[tenant.PartitionOf(id)] == ids[2]:
			redone++ // provisioned by the dead replica, which died before recording it
		default:
			t.Errorf("tenant %s (partition %d, held by %s before the kill) was provisioned %v and made ready by %s",
				id, tenant.PartitionOf(id), before[tenant.PartitionOf(id)], by, readyBy[0])
		}
	}
	t.Logf("every tenant was provisioned by one replica, except %d the dead replica provisioned without living to record it", redone)

	// A planned stop: the replica releases its partitions and the last one
	// takes them without waiting for the TTL.
	stopping := time.Now()
	survivors[1].Stop()
	stopped := time.Since(stopping)
	if !strings.Contains(survivors[1].Log(), `"msg":"partitions released"`) {
		t.Errorf("the replica stopped without releasing its partitions:\n%s", survivors[1].Log())
	}
	took = waitHolders(ctx, t, leases, "the last replica holds every partition", balancedAmong(ids[0]))
	t.Logf("a replica stopped gracefully in %v; the last one held every partition %v after it exited", stopped.Round(time.Millisecond), took.Round(time.Millisecond))
	if took > replicasTTL {
		t.Errorf("released partitions were taken %v after the stop; want within a TTL", took)
	}
	servetest.CreateTenant(ctx, t, tenants, "shard-after", json.RawMessage(`{"image": "app:1"}`))
	waitReadyCount(ctx, t, tenants, replicasTenants+1)
}

var startedAs = regexp.MustCompile(`"msg":"controller started".*?"identity":"([^"]+)"`)

// identity is the controller identity p last started with.
func identity(t *testing.T, p *servetest.Process) string {
	t.Helper()
	m := startedAs.FindAllStringSubmatch(p.Log(), -1)
	if len(m) == 0 {
		t.Fatalf("no controller started:\n%s", p.Log())
	}
	return m[len(m)-1][1]
}

// provisioned counts the successful provisions in a replica's log, by
// tenant id (the compute audit lines).
func provisioned(t *testing.T, log string) map[string]int {
	t.Helper()
	out := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"audit":"compute"`) {
			continue
		}
		var line struct {
			Operation string `json:"operation"`
			Outcome   string `json:"outcome"`
			TenantID  string `json:"tenant_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("an audit line that is not JSON: %v\n%s", err, sc.Text())
		}
		if line.Operation == "provision" && line.Outcome == "success" {
			out[line.TenantID]++
		}
	}
	return out
}

// holdersOf reads the live holder of each partition's lease.
func holdersOf(ctx context.Context, t *testing.T, s *postgres.Store) []string {
	t.Helper()
	leases, now, err := s.ListLeases(ctx, tenant.PartitionLeasePrefix)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, tenant.Partitions)
	for p, l := range tenant.PartitionHolders(leases, now) {
		if l != nil {
			out[p] = l.Holder
		}
	}
	return out
}

// waitHolders waits until the partitions' holders satisfy want and
// returns how long that took.
func waitHolders(ctx context.Context, t *testing.T, s *postgres.Store, what string, want func([]string) bool) time.Duration {
	t.Helper()
	start := time.Now()
	poll.Until(t, what, left(ctx), func() (bool, string) {
		h := holdersOf(ctx, t, s)
		return want(h), fmt.Sprintf("holders %v", h)
	})
	return time.Since(start)
}

// balancedAmong says each of the holders has its share of the partitions
// and nobody else has any, none unheld.
func balancedAmong(holders ...string) func([]string) bool {
	return func(h []string) bool {
		for _, holder := range h {
			if count(h, holder) < tenant.Partitions/len(holders) || count(h, holder) > (tenant.Partitions+len(holders)-1)/len(holders) {
				return false
			}
		}
		for _, holder := range holders {
			if count(h, holder) == 0 {
				return false
			}
		}
		return true
	}
}

func count(h []string, holder string) int {
	n := 0
	for _, x := range h {
		if x == holder {
			n++
		}
	}
	return n
}

// waitReady waits until p's /readyz answers 200.
func waitReady(ctx context.Context, t *testing.T, p *servetest.Process) {
	t.Helper()
	poll.Until(t, "/readyz of "+p.Addr()+" answers 200", left(ctx), func() (bool, string) {
		code := readyz(t, p.Addr())
		return code == http.StatusOK, fmt.Sprintf("%d; log:\n%s", code, p.Log())
	})
}

// waitReadyCount waits until at least n tenants are ready and returns how
// many there are; a failed tenant fails the test.
func waitReadyCount(ctx context.Context, t *testing.T, tenants *llclient.Tenants, n int) int {
	t.Helper()
	for {
		ready, names := 0, map[string]bool{}
		for tn, err := range tenants.All(ctx, llclient.ListOptions{PageSize: 500}) {
			if err != nil {
				t.Fatalf("list the tenants: %v", err)
			}
			if names[tn.Name] {
				t.Fatalf("tenant %s is listed twice", tn.Name)
			}
			names[tn.Name] = true
			switch tn.Status {
			case llclient.StatusReady:
				ready++
			case llclient.StatusFailed:
				t.Fatalf("tenant %s failed: %s", tn.Name, tn.StatusMessage)
			}
		}
		if ready >= n {
			return ready
		}
		if ctx.Err() != nil {
			t.Fatalf("%d tenants ready, want %d", ready, n)
		}
		sleep(ctx, 50*time.Millisecond)
	}
}
