package nomad_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// dockerBase names what the docker provider creates in these tests: its
// label_prefix is dockertest.Prefix(dockerBase), so that this run's
// cleanup removes its own containers and networks only, and a later run's
// sweep what a killed one left.
const dockerBase = "llnomad"

// mixed is `landlord serve` with two providers on the one Docker Engine:
// nomad, whose agent's docker driver runs its containers, and docker.
type mixed struct {
	agent   *nomadtest.Agent
	images  [2]string
	engine  *client.Client
	prefix  string // the docker provider's label_prefix
	client  *llclient.Client
	tenants *llclient.Tenants
}

// startMixed starts the agent and `landlord serve` with a nomad block for
// it, whose deployments finish in about a second (Nomad's default
// min_healthy_time is 10 s), and a docker block with local images only
// (the echo image exists nowhere else). What the docker provider leaves on
// the Engine is removed when t ends, after serve stops.
func startMixed(t *testing.T) *mixed {
	t.Helper()
	a, images := start(t)
	m := &mixed{agent: a, images: images, engine: dockertest.Engine(t), prefix: dockertest.Prefix(dockerBase)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if removed, err := dockertest.Sweep(ctx, m.engine, dockerBase); err != nil {
		t.Logf("sweep what ended runs left: %v", err)
	} else if len(removed) > 0 {
		t.Logf("removed what ended runs left: %s", strings.Join(removed, ", "))
	}
	t.Cleanup(func() { m.removeDocker(t) })
	l := startServeWith(t, a.Address, serveOptions{
		Nomad: []string{`update: {min_healthy_time: 500ms, healthy_deadline: 30s, progress_deadline: 1m}`},
		Compute: []string{
			"docker:",
			"  pull_policy: never",
			"  label_prefix: " + m.prefix,
			"  stop_timeout: 2s",
			"  address_pool: " + dockertest.AddressPoolOf("198.19.64.0/18"),
		},
		Controller: []string{"workers: 4", "lease_ttl: 2s"},
	})
	m.client = l.Client()
	m.tenants = m.client.Tenants()
	return m
}

// managed selects what the docker provider of these tests created.
func (m *mixed) managed() client.Filters {
	return client.Filters{}.Add("label", m.prefix+".managed-by=landlord")
}

// removeDocker removes the docker provider's containers and networks.
func (m *mixed) removeDocker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if cs, err := m.engine.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: m.managed()}); err == nil {
		for _, c := range cs.Items {
			if _, err := m.engine.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
				t.Logf("remove container %s: %v", c.ID, err)
			}
		}
	}
	if ns, err := m.engine.NetworkList(ctx, client.NetworkListOptions{Filters: m.managed()}); err == nil {
		for _, n := range ns.Items {
			if _, err := m.engine.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
				t.Logf("remove network %s: %v", n.Name, err)
			}
		}
	}
}

// ofWorkload reports whether labels are those of the docker provider's
// resources of the workload named name, or of a placement of the tenant
// named name (name-<placement>).
func (m *mixed) ofWorkload(labels map[string]string, name string) bool {
	n := labels[m.prefix+".tenant_name"]
	return n == name || strings.HasPrefix(n, name+"-")
}

// containers returns the docker provider's containers, running or not, of
// the workloads of the tenant named name: their states by id.
func (m *mixed) containers(t *testing.T, name string) map[string]string {
	t.Helper()
	cs, err := m.engine.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: m.managed()})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	out := map[string]string{}
	for _, c := range cs.Items {
		if m.ofWorkload(c.Labels, name) {
			out[c.ID] = string(c.State)
		}
	}
	return out
}

// networks returns the names of the docker provider's networks of the
// workloads of the tenant named name.
func (m *mixed) networks(t *testing.T, name string) []string {
	t.Helper()
	ns, err := m.engine.NetworkList(context.Background(), client.NetworkListOptions{Filters: m.managed()})
	if err != nil {
		t.Fatalf("list networks: %v", err)
	}
	var out []string
	for _, n := range ns.Items {
		if m.ofWorkload(n.Labels, name) {
			out = append(out, n.Name)
		}
	}
	return out
}

// jobRuns reports whether the Nomad job jobID is running with a running
// allocation, else what it is.
func (m *mixed) jobRuns(jobID string) (bool, string) {
	job, _, err := m.agent.Client.Jobs().Info(jobID, nil)
	if err != nil {
		return false, err.Error()
	}
	allocs, _, err := m.agent.Client.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return false, err.Error()
	}
	running := slices.ContainsFunc(allocs, func(al *api.AllocationListStub) bool { return al.ClientStatus == api.AllocClientStatusRunning })
	return *job.Status == "running" && running, fmt.Sprintf("job %s is %s; a running allocation: %t", jobID, *job.Status, running)
}

// portableConfig is the echo image answering on 8080 with GREETING, on
// provider: a config both docker and nomad run as it is.
func portableConfig(image, greeting, provider string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"compute_provider": %q, "image": %q, "env": {"GREETING": %q},
		"ports": [{"name": "http", "container_port": 8080}],
		"health_check": {"http": {"port": 8080, "path": "/healthz"}, "interval": "1s", "timeout": "1s"},
		"resources": {"cpu_millicores": 100, "memory_mib": 32}}`, provider, image, greeting))
}

// envAt is the environment the echo server at address ("host:port")
// reports.
func envAt(ctx context.Context, t *testing.T, address string) map[string]string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+address+"/env", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", req.URL, err)
	}
	defer resp.Body.Close()
	var env map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("GET %s: %v", req.URL, err)
	}
	return env
}

// servedBy says what runs the echo server whose environment is env: the
// Nomad job (the docker driver sets NOMAD_JOB_ID), or a container of the
// docker provider among ids (the Engine sets HOSTNAME to the start of the
// container's id).
func servedBy(env map[string]string, ids map[string]string) string {
	if job := env["NOMAD_JOB_ID"]; job != "" {
		return "nomad job " + job
	}
	for id := range ids {
		if h := env["HOSTNAME"]; h != "" && strings.HasPrefix(id, h) {
			return "docker container " + id
		}
	}
	return "unknown (HOSTNAME " + env["HOSTNAME"] + ")"
}

// placementOf is the named placement of tn; it fails t when there is none.
func placementOf(t *testing.T, tn llclient.Tenant, name string) llclient.Placement {
	t.Helper()
	for _, p := range tn.Placements {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("tenant %s has no placement %s: %+v", tn.Name, name, tn.Placements)
	return llclient.Placement{}
}

// TestPlacementsOnDockerAndNomad drives a tenant whose web placement runs
// on the docker provider and whose worker runs on nomad, both in one
// `landlord serve`: it becomes ready with each placement's endpoint
// answering from its own platform and the tenant's endpoints being both
// placements'; a new env value of worker reaches Nomad while web's
// container is left alone; delete leaves no container, network or job.
func TestPlacementsOnDockerAndNomad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	m := startMixed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const name = "e2e-pl"
	webConfig := portableConfig(m.images[0], "web-1", "docker")
	created, err := m.tenants.Create(ctx, llclient.CreateTenantRequest{Name: name, Placements: []llclient.PlacementRequest{
		{Name: "web", ComputeConfig: webConfig},
		{Name: "worker", ComputeConfig: portableConfig(m.images[0], "worker-1", "nomad")},
	}}, llclient.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	begin := time.Now()
	tn := waitTenant(ctx, t, m.tenants, created.ID, llclient.UntilReady)
	t.Logf("tenant with placements on docker and nomad: create → ready in %v", time.Since(begin).Round(time.Millisecond))
	web, worker := placementOf(t, tn, "web"), placementOf(t, tn, "worker")
	for _, p := range []llclient.Placement{web, worker} {
		if p.Status != llclient.StatusReady || p.ObservedGeneration != tn.Generation || len(p.Endpoints) == 0 {
			t.Fatalf("placement %s of the ready tenant is %s at generation %d of %d with endpoints %v", p.Name, p.Status, p.ObservedGeneration, tn.Generation, p.Endpoints)
		}
	}
	if web.ComputeProvider != "docker" || worker.ComputeProvider != "nomad" {
		t.Errorf("web is on %q and worker on %q, want docker and nomad", web.ComputeProvider, worker.ComputeProvider)
	}
	if want := slices.Concat(web.Endpoints, worker.Endpoints); !slices.Equal(tn.Endpoints, want) {
		t.Errorf("the tenant's endpoints are %v, want web's then worker's: %v", tn.Endpoints, want)
	}
	webContainers := m.containers(t, name)
	if len(webContainers) != 1 {
		t.Fatalf("the docker provider has %d containers of the tenant, want web's one: %v", len(webContainers), webContainers)
	}
	env := envAt(ctx, t, web.Endpoints[0].Address)
	if by := servedBy(env, webContainers); env["GREETING"] != "web-1" || !strings.HasPrefix(by, "docker container") {
		t.Errorf("web's endpoint %s: GREETING=%q, served by %s; want web-1 from the docker provider's container", web.Endpoints[0].Address, env["GREETING"], by)
	}
	jobID := worker.ResourceIDs["job"]
	if jobID == "" {
		t.Fatalf("worker has no job among its resource ids %v", worker.ResourceIDs)
	}
	env = envAt(ctx, t, worker.Endpoints[0].Address)
	if by := servedBy(env, webContainers); env["GREETING"] != "worker-1" || by != "nomad job "+jobID {
		t.Errorf("worker's endpoint %s: GREETING=%q, served by %s; want worker-1 from nomad job %s", worker.Endpoints[0].Address, env["GREETING"], by, jobID)
	}

	// A new env value of worker: a new job version on Nomad, which
	// answers it; web's container is not touched.
	set, err := m.tenants.Replace(ctx, created.ID, llclient.ReplaceTenantRequest{Placements: []llclient.PlacementRequest{
		{Name: "web", ComputeConfig: webConfig},
		{Name: "worker", ComputeConfig: portableConfig(m.images[0], "worker-2", "nomad")},
	}}, llclient.UpdateOptions{IfMatch: tn.Version})
	if err != nil {
		t.Fatalf("replace: %v", err)
	}
	begin = time.Now()
	tn = waitTenant(ctx, t, m.tenants, created.ID, func(tn llclient.Tenant) (bool, error) {
		if tn.ObservedGeneration < set.Generation {
			return false, nil
		}
		return llclient.UntilReady(tn)
	})
	t.Logf("worker's new env value: replace → ready in %v", time.Since(begin).Round(time.Millisecond))
	worker = placementOf(t, tn, "worker")
	env = envAt(ctx, t, worker.Endpoints[0].Address)
	if by := servedBy(env, webContainers); env["GREETING"] != "worker-2" || by != "nomad job "+jobID {
		t.Errorf("after replace worker's endpoint %s: GREETING=%q, served by %s; want worker-2 from nomad job %s", worker.Endpoints[0].Address, env["GREETING"], by, jobID)
	}
	if job, _, err := m.agent.Client.Jobs().Info(jobID, nil); err != nil || *job.Version != 1 {
		t.Errorf("after replace job %s: %v, want version 1", jobID, err)
	}
	if got := m.containers(t, name); !maps.Equal(got, webContainers) {
		t.Errorf("after worker's change web's containers are %v, want %v untouched", got, webContainers)
	}
	web2 := placementOf(t, tn, "web")
	if !slices.Equal(web2.Endpoints, web.Endpoints) {
		t.Errorf("after worker's change web's endpoints are %v, want %v", web2.Endpoints, web.Endpoints)
	}
	if env := envAt(ctx, t, web2.Endpoints[0].Address); env["GREETING"] != "web-1" {
		t.Errorf("after worker's change web answers GREETING=%q, want web-1", env["GREETING"])
	}

	// Delete: nothing of either placement is left.
	if _, err := m.tenants.Delete(ctx, created.ID, llclient.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	begin = time.Now()
	waitTenant(ctx, t, m.tenants, created.ID, llclient.UntilDeleted)
	t.Logf("delete → deleted in %v", time.Since(begin).Round(time.Millisecond))
	if got := m.containers(t, name); len(got) != 0 {
		t.Errorf("after delete the docker provider's containers of the tenant are left: %v", got)
	}
	if got := m.networks(t, name); len(got) != 0 {
		t.Errorf("after delete the docker provider's networks of the tenant are left: %v", got)
	}
	if n := countResources(t, m.agent, worker.WorkloadID, jobID); n != 0 {
		t.Errorf("after delete %d of worker's resources are left (jobs, Variables, containers)", n)
	}
}

// The steps of a move, as the API shows them (Move.Step).
const (
	stepProvisioning     = "provisioning"
	stepAwaitingApproval = "awaiting_approval"
	stepDestroyingSource = "destroying_source"
)

// TestMoveDockerToNomad moves a tenant from the docker provider to nomad
// while a prober follows it as a client would, then moves it back holding
// for an approval and cancels that. It logs the move's timings (request →
// target ready → switched → done) and the availability gap the prober saw,
// and allows at most one failed probe during the switch.
func TestMoveDockerToNomad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	m := startMixed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const name = "e2e-move"
	created := servetest.CreateTenant(ctx, t, m.tenants, name, portableConfig(m.images[0], "hello", "docker"))
	if t.Failed() {
		t.FailNow()
	}
	id := created.ID
	tn := waitTenant(ctx, t, m.tenants, id, llclient.UntilReady)
	source := m.containers(t, name)
	if len(source) != 1 || tn.ComputeProvider != "docker" {
		t.Fatalf("the tenant is on %q with docker containers %v, want on docker with one", tn.ComputeProvider, source)
	}
	from := tn.Endpoints[0].Address
	if env := envAt(ctx, t, from); env["GREETING"] != "hello" || !strings.HasPrefix(servedBy(env, source), "docker container") {
		t.Fatalf("before the move the endpoint answers GREETING=%q from %s, want hello from the docker provider", env["GREETING"], servedBy(env, source))
	}

	// Move to nomad, followed by the prober.
	p := startProber(m.tenants, id)
	requested := time.Now()
	moving, err := m.tenants.Move(ctx, id, llclient.MoveRequest{ComputeConfig: portableConfig(m.images[0], "hello", "nomad")}, llclient.UpdateOptions{})
	if err != nil {
		p.stop()
		t.Fatalf("move: %v", err)
	}
	if len(moving.Placements) != 1 || moving.Placements[0].Move == nil || moving.Placements[0].Move.Step != stepProvisioning || moving.Status != llclient.StatusUpdating {
		t.Errorf("the tenant the move answers is %s with placements %+v, want updating with a move provisioning", moving.Status, moving.Placements)
	}
	tn = waitTenant(ctx, t, m.tenants, id, untilMoved)
	doneSeen := time.Now()
	probes := p.stop()
	if tn.Status != llclient.StatusReady || tn.ComputeProvider != "nomad" {
		t.Errorf("after the move the tenant is %s on %q, want ready on nomad", tn.Status, tn.ComputeProvider)
	}
	jobID := tn.ResourceIDs["job"]
	if env := envAt(ctx, t, tn.Endpoints[0].Address); env["GREETING"] != "hello" || jobID == "" || env["NOMAD_JOB_ID"] != jobID {
		t.Errorf("after the move the endpoint %s answers GREETING=%q from %s, want hello from nomad job %q", tn.Endpoints[0].Address, env["GREETING"], servedBy(env, source), jobID)
	}
	if left := m.containers(t, name); len(left) != 0 {
		t.Errorf("after the move the docker provider's containers of the tenant are left: %v", left)
	}
	if left := m.networks(t, name); len(left) != 0 {
		t.Errorf("after the move the docker provider's networks of the tenant are left: %v", left)
	}
	events := moveEvents(ctx, t, m.tenants, id)
	asked := eventWith(t, events, "asked for")
	switched := eventWith(t, events, "switched from docker to nomad")
	done := eventWith(t, events, "from docker to nomad is done")

	// The timings and the availability gap.
	since := func(at time.Time) float64 { return at.Sub(requested).Seconds() }
	// The history dates the request, the switch and the end; the target's
	// readiness records no event, so it is when the prober first saw it
	// (to within probeEvery), or the switch should that come first.
	targetReady := switched.Time
	for _, pr := range probes {
		if pr.other == llclient.StatusReady || pr.step == stepDestroyingSource {
			targetReady = minTime(targetReady, pr.at)
			break
		}
	}
	// The prober followed the switch: probes answered at both addresses.
	for _, addr := range []string{from, tn.Endpoints[0].Address} {
		if !slices.ContainsFunc(probes, func(l look) bool { return l.address == addr && l.err == nil }) {
			t.Errorf("no probe answered at %s; the prober did not follow the move from %s to %s", addr, from, tn.Endpoints[0].Address)
		}
	}
	g := gapOf(probes, requested, doneSeen)
	t.Logf("move timing: docker→nomad asked=%.2fs target_ready=%.2fs switched=%.2fs done=%.2fs failed_probes=%d longest_gap_ms=%d probes=%d api_errors=%d",
		since(asked.Time), since(targetReady), since(switched.Time), since(done.Time), g.failed, g.longest.Milliseconds(), g.probes, g.apiErrors)
	for _, f := range g.failures {
		t.Logf("failed probe at %.3fs of %s (move step %q): %v", since(f.at), f.address, f.step, f.err)
	}
	if g.failed > 1 {
		t.Errorf("%d probes failed during the move, longest gap %v; at most one may", g.failed, g.longest)
	}

	// Back to docker, holding for an approval: it stops with both
	// workloads running, and a cancel destroys the docker target while
	// Nomad serves on, unswitched.
	p = startProber(m.tenants, id)
	requested = time.Now()
	if _, err := m.tenants.Move(ctx, id, llclient.MoveRequest{ComputeConfig: portableConfig(m.images[0], "hello", "docker"), Hold: true}, llclient.UpdateOptions{}); err != nil {
		p.stop()
		t.Fatalf("move back with hold: %v", err)
	}
	tn = waitTenant(ctx, t, m.tenants, id, func(tn llclient.Tenant) (bool, error) {
		if len(tn.Placements) == 0 || tn.Placements[0].Move == nil {
			return false, fmt.Errorf("tenant %s has no move in progress: %s", tn.Name, tn.Status)
		}
		switch mv := tn.Placements[0].Move; {
		case mv.Other.Status == llclient.StatusFailed:
			return false, fmt.Errorf("the move's target failed: %s", mv.Other.StatusMessage)
		case mv.Step == stepDestroyingSource:
			return false, fmt.Errorf("the move switched although it holds for an approval")
		default:
			return mv.Step == stepAwaitingApproval, nil
		}
	})
	held := time.Since(requested)
	target := m.containers(t, name)
	if len(target) != 1 || !slices.Equal(slices.Collect(maps.Values(target)), []string{"running"}) {
		t.Errorf("while the move holds the docker provider's containers of the tenant are %v, want the target's one running", target)
	}
	if ok, state := m.jobRuns(jobID); !ok {
		t.Errorf("while the move holds the source: %s", state)
	}
	if tn.Status != llclient.StatusUpdating || tn.ComputeProvider != "nomad" {
		t.Errorf("while the move holds the tenant is %s on %q, want updating on nomad", tn.Status, tn.ComputeProvider)
	}
	mv := tn.Placements[0].Move
	if len(mv.Other.Endpoints) == 0 {
		t.Errorf("the held move's target has no endpoints")
	} else if env := envAt(ctx, t, mv.Other.Endpoints[0].Address); !strings.HasPrefix(servedBy(env, target), "docker container") {
		t.Errorf("the held move's target endpoint %s is served by %s, want the docker provider's container", mv.Other.Endpoints[0].Address, servedBy(env, target))
	}
	if env := envAt(ctx, t, tn.Endpoints[0].Address); env["NOMAD_JOB_ID"] != jobID {
		t.Errorf("while the move holds the tenant's endpoint %s is served by %s, want nomad job %s", tn.Endpoints[0].Address, servedBy(env, target), jobID)
	}
	if _, err := m.tenants.CancelMove(ctx, id, "", llclient.UpdateOptions{}); err != nil {
		p.stop()
		t.Fatalf("cancel the move: %v", err)
	}
	tn = waitTenant(ctx, t, m.tenants, id, untilMoved)
	cancelled := time.Since(requested)
	probes = p.stop()
	if left := m.containers(t, name); len(left) != 0 {
		t.Errorf("after the cancel the docker target's containers are left: %v", left)
	}
	if left := m.networks(t, name); len(left) != 0 {
		t.Errorf("after the cancel the docker target's networks are left: %v", left)
	}
	if env := envAt(ctx, t, tn.Endpoints[0].Address); tn.Status != llclient.StatusReady || env["NOMAD_JOB_ID"] != jobID {
		t.Errorf("after the cancel the tenant is %s, its endpoint served by %s, want ready on nomad job %s", tn.Status, servedBy(env, target), jobID)
	}
	if ok, state := m.jobRuns(jobID); !ok {
		t.Errorf("after the cancel: %s", state)
	}
	events = moveEvents(ctx, t, m.tenants, id)
	eventWith(t, events, "holds for an approval")
	eventWith(t, events, "cancelled")
	eventWith(t, events, "is undone")
	// Nothing switches: no probe may fail.
	g = gapOf(probes, requested, time.Now())
	t.Logf("held move: nomad→docker awaiting_approval=%.2fs cancelled=%.2fs failed_probes=%d longest_gap_ms=%d probes=%d api_errors=%d",
		held.Seconds(), cancelled.Seconds(), g.failed, g.longest.Milliseconds(), g.probes, g.apiErrors)
	for _, f := range g.failures {
		t.Errorf("failed probe while the move held or was cancelled, at %.3fs, of %s (move step %q): %v", since(f.at), f.address, f.step, f.err)
	}

	if _, err := m.tenants.Delete(ctx, id, llclient.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitTenant(ctx, t, m.tenants, id, llclient.UntilDeleted)
	if n := countResources(t, m.agent, tn.Placements[0].WorkloadID, jobID); n != 0 {
		t.Errorf("after delete %d of the tenant's resources are left on Nomad (jobs, Variables, containers)", n)
	}
}

// untilMoved is a condition for Wait: done when the tenant's placement
// has no move in progress and the tenant is ready. A move whose target
// fails is an error.
func untilMoved(tn llclient.Tenant) (bool, error) {
	if len(tn.Placements) > 0 {
		if mv := tn.Placements[0].Move; mv != nil {
			if mv.Other.Status == llclient.StatusFailed {
				return false, fmt.Errorf("the move's %s workload failed: %s", mv.Step, mv.Other.StatusMessage)
			}
			return false, nil
		}
	}
	return llclient.UntilReady(tn)
}

// moveEvents are the tenant's move events, oldest first.
func moveEvents(ctx context.Context, t *testing.T, tenants *llclient.Tenants, id string) []llclient.Event {
	t.Helper()
	var out []llclient.Event
	for ev, err := range tenants.AllEvents(ctx, id, llclient.EventOptions{}) {
		if err != nil {
			t.Fatalf("events of %s: %v", id, err)
		}
		if ev.Type == "move" {
			out = append(out, ev)
		}
	}
	return out
}

// eventWith is the last of events whose message has s; it fails t when
// none has.
func eventWith(t *testing.T, events []llclient.Event, s string) llclient.Event {
	t.Helper()
	for _, ev := range slices.Backward(events) {
		if strings.Contains(ev.Message, s) {
			return ev
		}
	}
	var msgs []string
	for _, ev := range events {
		msgs = append(msgs, ev.Message)
	}
	t.Errorf("no move event says %q; the move events:\n%s", s, strings.Join(msgs, "\n"))
	return llclient.Event{}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
