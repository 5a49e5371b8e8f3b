package nomad_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

func TestMain(m *testing.M) { os.Exit(nomadtest.Main(m)) }

var hashKey = []byte("landlord-nomad-test-hash-key-0123")

// start returns the agent and the echo image's two tags.
func start(t testing.TB) (*nomadtest.Agent, [2]string) {
	t.Helper()
	a := nomadtest.Start(t)
	return a, dockertest.EchoImage(t)
}

// block is a nomad block for the agent, with these extra keys (JSON
// members, comma-separated).
func block(a *nomadtest.Agent, extra string) string {
	b := fmt.Sprintf(`{"address": %q`, a.Address)
	if extra != "" {
		b += ", " + extra
	}
	return b + "}"
}

func newProvider(t testing.TB, block string, logs *providertest.LogBuffer) *nomad.Provider {
	t.Helper()
	opts := nomad.Options{Block: json.RawMessage(block), HashKey: hashKey, Getenv: func(string) string { return "" }}
	if logs != nil {
		opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}
	p, err := nomad.New(context.Background(), opts)
	if err != nil {
		t.Fatalf("nomad.New: %v", err)
	}
	return p
}

// countResources counts what exists on Nomad and the Engine for the
// tenant whose job is jobID: jobs with its id in their meta (in any
// namespace), the job's Variables, and 1 when any container of the job
// exists. Containers count as one, because a rollout replaces them: a leak
// is a container left once the job is gone, a duplicate a second job.
func countResources(t testing.TB, a *nomadtest.Agent, tenantID, jobID string) int {
	t.Helper()
	q := &api.QueryOptions{Namespace: "*", Filter: "Meta.landlord_tenant_id == " + strconv.Quote(tenantID)}
	jobs, _, err := a.Client.Jobs().ListOptions(&api.JobListOptions{Fields: &api.JobListFields{Meta: true}}, q)
	if err != nil {
		t.Fatalf("list jobs: %v", err)
	}
	vars, _, err := a.Client.Variables().PrefixList("nomad/jobs/"+jobID+"/", nil)
	if err != nil {
		t.Fatalf("list variables: %v", err)
	}
	n := len(jobs) + len(vars)
	if len(a.Containers(t, jobID)) > 0 {
		n++
	}
	return n
}

// startServe starts `landlord serve` with a nomad block for address (the
// agent, or a proxy of it) and these controller settings (YAML lines under
// controller:).
func startServe(tb testing.TB, address string, controller ...string) *servetest.Process {
	tb.Helper()
	return startServeWith(tb, address, serveOptions{Controller: controller})
}

// serveOptions are what startServeWith adds to startServe's configuration,
// as YAML lines.
type serveOptions struct {
	// Nomad are lines under compute.nomad: tenant defaults, say.
	Nomad []string
	// Compute are lines under compute: another provider's block, say.
	// Nomad stays the default provider.
	Compute []string
	// Controller are lines under controller:.
	Controller []string
}

// startServeWith is startServe with more configuration.
func startServeWith(tb testing.TB, address string, opts serveOptions) *servetest.Process {
	tb.Helper()
	config := fmt.Sprintf("compute:\n  default: nomad\n  nomad:\n    address: %s\n", address)
	for _, line := range opts.Nomad {
		config += "    " + line + "\n"
	}
	for _, line := range opts.Compute {
		config += "  " + line + "\n"
	}
	config += "controller:\n"
	for _, line := range opts.Controller {
		config += "  " + line + "\n"
	}
	l := servetest.New(tb, servetest.Options{Config: config})
	l.Start()
	return l
}
