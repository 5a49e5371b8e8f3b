package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/poll"
)

// A tenant of two placements on the mock provider, from create to get,
// list, history and set: each placement is declared with --placement,
// shown with its own status and endpoints, its history read alone, and
// one left out of a set is removed.
func TestPlacements(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	web := filepath.Join(t.TempDir(), "web.yaml")
	writeTestFile(t, web, "image: web:1\nports:\n  - container_port: 8080\n")

	res := mustRunCLI(t, srv, exitOK, "", "create", "acme", "--placement", "web=@"+web,
		"--placement", `worker={"image": "worker:1", "compute_provider": "mock"}`, "--provider", "mock", "--wait", "--timeout", "30s", "-o", "json")
	created := mustTenantJSON(t, res.stdout)
	if created.Status != client.StatusReady || len(created.Placements) != 2 {
		t.Fatalf("created %s with placements %+v", created.Status, created.Placements)
	}
	for i, want := range []struct{ name, config string }{
		// --provider is set in a config that names no provider, first.
		{"web", `{"compute_provider":"mock","image":"web:1","ports":[{"container_port":8080}]}`},
		{"worker", `{"image":"worker:1","compute_provider":"mock"}`},
	} {
		p := created.Placements[i]
		if p.Name != want.name || p.ComputeProvider != "mock" || p.Status != client.StatusReady || !sameJSON(p.ComputeConfig, want.config) {
			t.Errorf("placement %d: %s on %s, %s, config %s; want %s with %s", i, p.Name, p.ComputeProvider, p.Status, p.ComputeConfig, want.name, want.config)
		}
	}

	t.Run("get", func(t *testing.T) {
		out := mustRunCLI(t, srv, exitOK, "", "get", "acme").stdout
		mustContain(t, "get", out, "Provider:    mock\n",
			"Placement web:\n  Provider:   mock\n  Status:     ready\n  Workload:   acme-web-", "\n  Endpoints:  app 8080/tcp → mock://",
			"Placement worker:\n  Provider:  mock\n  Status:    ready\n  Workload:  acme-worker-", "\n  Compute config:\n    image: worker:1\n")
		if strings.Contains(out, "\nEndpoints:") || strings.Contains(out, "\nCompute config:") {
			t.Errorf("get shows the first placement's fields as the tenant's:\n%s", out)
		}
		mustContain(t, "get -o yaml", mustRunCLI(t, srv, exitOK, "", "get", "acme", "-o", "yaml").stdout, "placements:\n", "name: web\n", "name: worker\n")
	})
	t.Run("list", func(t *testing.T) {
		mustRunCLI(t, srv, exitOK, "", "create", "plain", "--config", "image: a")
		out := mustRunCLI(t, srv, exitOK, "", "list").stdout
		if row := lineOf(t, out, "acme "); !strings.Contains(row, " ready ") || !strings.Contains(row, " mock ") || strings.Contains(row, "mock+mock") {
			t.Errorf("the row of acme: %q", row)
		}
		var list client.TenantList
		if err := json.Unmarshal([]byte(mustRunCLI(t, srv, exitOK, "", "list", "-o", "json").stdout), &list); err != nil {
			t.Fatal(err)
		}
		for _, tn := range list.Tenants {
			if got := len(tn.Placements); (tn.Name == "acme") != (got == 2) {
				t.Errorf("list -o json: %s has %d placements", tn.Name, got)
			}
		}
	})
	t.Run("history", func(t *testing.T) {
		all := mustRunCLI(t, srv, exitOK, "", "history", "acme").stdout
		if !strings.HasPrefix(all, "AGE  PLACEMENT  TYPE ") {
			t.Errorf("history of a tenant with placements has no PLACEMENT column:\n%s", all)
		}
		mustContain(t, "history", all, " web ", " worker ")
		out := mustRunCLI(t, srv, exitOK, "", "history", "acme", "--placement", "web").stdout
		lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
		if len(lines) == 0 || len(lines) >= strings.Count(all, "\n")-1 {
			t.Fatalf("history --placement web has %d of the tenant's %d events:\n%s", len(lines), strings.Count(all, "\n")-1, out)
		}
		for _, l := range lines {
			if !strings.Contains(l, " web ") {
				t.Errorf("history --placement web shows %q", l)
			}
		}
		var list client.EventList
		if err := json.Unmarshal([]byte(mustRunCLI(t, srv, exitOK, "", "history", "acme", "--placement", "worker", "-o", "json").stdout), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Events) == 0 || slices.ContainsFunc(list.Events, func(e client.Event) bool { return e.Placement != "worker" }) {
			t.Errorf("history --placement worker -o json: %+v", list.Events)
		}
		// cobra's hidden __complete command is what shells call.
		res := mustRunCLI(t, nil, exitOK, "", "__complete", "history", "acme", "--addr", srv.URL, "--placement", "w")
		if !strings.HasPrefix(res.stdout, "web\tmock, ready\nworker\tmock, ready\n:4\n") {
			t.Errorf("--placement completions:\n%s", res.stdout)
		}
		res = mustRunCLI(t, srv, exitNotFound, "", "history", "acme", "--placement", "db")
		mustContain(t, "stderr", res.stderr, `tenant acme has no placement "db"; it has web, worker`, "\n  --placement: ")
		// A plain tenant's history is as it was.
		if out := mustRunCLI(t, srv, exitOK, "", "history", "plain").stdout; !strings.HasPrefix(out, "AGE  TYPE ") {
			t.Errorf("history of a plain tenant:\n%s", out)
		}
	})
	t.Run("errors name the placement", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "create", "bad", "--placement", "web=image: a", "--placement", `worker={"image": 7}`)
		mustContain(t, "stderr", res.stderr, "(422 ", "\n  --placement worker compute_config/image: must be a string")
		// --provider fills in only where a config names no provider.
		res = mustRunCLI(t, srv, exitFailure, "", "create", "bad", "--placement", "web=image: a", "--placement", "worker=image: b\ncompute_provider: nope", "--provider", "mock")
		mustContain(t, "stderr", res.stderr, "(422 provider_not_found)", "\n  --placement worker compute_config/compute_provider: ")
		res = mustRunCLI(t, srv, exitFailure, "", "create", "bad", "--placement", "web=image: [a")
		mustContain(t, "stderr", res.stderr, "landlord: --placement web: line 1")
		res = mustRunCLI(t, srv, exitFailure, "", "create", "bad", "--placement", "web=@"+filepath.Join(t.TempDir(), "none.yaml"))
		mustContain(t, "stderr", res.stderr, "landlord: --placement web=@", "none.yaml: open ")
	})
	t.Run("set", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "set", "acme", "--config", "image: a")
		mustContain(t, "stderr", res.stderr, "tenant acme has placements web, worker", "\n  --placement: is required for a tenant with placements")

		res = mustRunCLI(t, srv, exitOK, "", "set", "acme", "--placement", "web=image: web:2", "--label", "tier=gold", "-o", "json")
		set := mustTenantJSON(t, res.stdout)
		if set.Labels["tier"] != "gold" || set.Generation != created.Generation+1 {
			t.Errorf("after set: labels %v, generation %d", set.Labels, set.Generation)
		}
		for _, p := range set.Placements {
			if p.Name == "worker" && !p.Removed {
				t.Errorf("worker, left out of set, is not being removed: %+v", p)
			}
		}
		c := srv.Client(t, "")
		poll.Until(t, "worker is removed and acme ready", 30*time.Second, func() (bool, string) {
			tn, err := c.Tenants().Get(t.Context(), "acme", client.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return tn.Status == client.StatusReady && len(tn.Placements) == 1 && tn.Placements[0].Name == "web", fmt.Sprintf("%s with %+v", tn.Status, tn.Placements)
		})
		out := mustRunCLI(t, srv, exitOK, "", "get", "acme").stdout
		mustContain(t, "get", out, "Placement web:", "    image: web:2\n")
		if strings.Contains(out, "worker") {
			t.Errorf("worker is still shown:\n%s", out)
		}
	})
	t.Run("set with a window", func(t *testing.T) {
		// With a flag of the plan or window, the placements go in a merge
		// patch, which replaces them whole as well.
		args := []string{"set", "acme", "--placement", "web=image: web:3", "--placement", "cron=image: cron:1", "--maintenance-window", "01:00-02:00", "-o", "json"}
		res := runCLI(t, srv, "", args...)
		if res.code != exitOK {
			t.Fatalf("landlord %s: exit %d\n%s", strings.Join(args, " "), res.code, res.stderr)
		}
		set := mustTenantJSON(t, res.stdout)
		if set.MaintenanceWindow == nil || len(set.Placements) != 2 || set.Placements[1].Name != "cron" || !sameJSON(set.Placements[0].ComputeConfig, `{"image":"web:3"}`) {
			t.Errorf("after set with a window: window %+v, placements %+v", set.MaintenanceWindow, set.Placements)
		}
	})
}

// The usage errors of --placement, each before anything is sent.
func TestPlacementUsage(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"create with --config", []string{"create", "x", "--config", "image: a", "--placement", "web=image: a"}, "--placement and --config cannot be given together"},
		{"set with --config", []string{"set", "x", "--config", "image: a", "--placement", "web=image: a"}, "--placement and --config cannot be given together"},
		{"no name", []string{"create", "x", "--placement", "image: a"}, `--placement "image: a": give NAME=CONFIG, such as web=@web.yaml`},
		{"an empty name", []string{"create", "x", "--placement", "=image: a"}, `--placement "=image: a": give NAME=CONFIG`},
		{"a config with an =, no name", []string{"create", "x", "--placement", `{"image": "a=b"}`}, `--placement "{\"image\": \"a=b\"}": give NAME=CONFIG`},
		{"two read stdin", []string{"create", "x", "--placement", "web=-", "--placement", "worker=-"}, "--placement web=- and worker=- both read standard input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRunCLI(t, srv, exitUsage, "", tt.args...)
			mustContain(t, "stderr", res.stderr, "landlord: "+tt.want)
		})
	}
	if res := mustRunCLI(t, srv, exitOK, "", "list", "-o", "json").stdout; strings.Contains(res, `"name": "x"`) {
		t.Errorf("a usage error created a tenant:\n%s", res)
	}
	// One placement may be read from standard input.
	res := mustRunCLI(t, srv, exitOK, "image: from-stdin", "create", "x", "--placement", "web=-", "-o", "json")
	if tn := mustTenantJSON(t, res.stdout); len(tn.Placements) != 1 || !strings.Contains(string(tn.Placements[0].ComputeConfig), "from-stdin") {
		t.Errorf("placements %+v", tn.Placements)
	}
}

// lineOf is the line of out that starts with prefix.
func lineOf(t *testing.T, out, prefix string) string {
	t.Helper()
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starts with %q in:\n%s", prefix, out)
	return ""
}
