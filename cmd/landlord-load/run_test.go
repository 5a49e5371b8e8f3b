package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

const testToken = "load-test-token"

func testOptions(t *testing.T, srv *clienttest.Server) options {
	t.Helper()
	o, err := parseFlags([]string{"--address", srv.URL, "--token", testToken, "-n", "60", "-c", "4",
		"--samples", "25", "--idle", "100ms", "--poll", "5ms", "--load-read-rate", "1000", "--json", "--timeout", "1m"},
		env(nil), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" {
		o.pid = os.Getpid() // the server runs in this process
	}
	return o
}

// TestRun runs the whole tool against a real API and controller in this
// process.
func TestRun(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true, Tokens: map[string]string{"ops": testToken}})
	o := testOptions(t, srv)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("not one JSON report: %v\n%s", err, stdout.String())
	}
	if rep.Tenants != 60 || rep.Provider != "mock" || rep.Prefix != o.prefix {
		t.Errorf("report header %+v", rep)
	}
	for name, r := range map[string]Requests{"create": rep.Create, "delete": rep.Delete} {
		if r.OK != 60 || r.Errors != 0 || r.Latency.Count != 60 || r.Latency.P50 <= 0 || r.Latency.Max < r.Latency.P99 || r.PerSecond <= 0 {
			t.Errorf("%s: %+v", name, r)
		}
	}
	for name, s := range map[string]Settle{"ready": rep.Ready, "deleted": rep.Deleted} {
		if s.Polls < 1 || s.FromFirstS < s.FromLastS || s.FromLastS < 0 {
			t.Errorf("%s: %+v", name, s)
		}
	}
	r := rep.Reads
	if r.Errors != 0 || r.ListFirst.Count < 25 || r.GetByID.Count != 25 || r.GetByName.Count != 25 || r.ListCursor.Count == 0 {
		t.Errorf("reads at rest: %+v", r)
	}
	if rep.ReadsUnderLoad.Errors != 0 || rep.ReadsUnderLoad.ListFirst.Count == 0 {
		t.Errorf("reads under load: %+v", rep.ReadsUnderLoad)
	}
	// Connections are reused: about one per client, not one per request.
	if rep.Connections > 2*(o.concurrency+4) {
		t.Errorf("%d connections for %d clients: they are not reused", rep.Connections, o.concurrency)
	}

	var names []string
	for _, p := range rep.Phases {
		names = append(names, p.Name)
	}
	want := "create ready reads delete deleted"
	if o.pid != 0 {
		want = "create ready reads idle delete deleted"
		if rep.Server == nil || rep.Server.CPUPerTenantMS == nil || *rep.Server.CPUPerTenantMS <= 0 || rep.Server.PeakRSSMiB <= 0 || rep.Server.PeakAnonMiB <= 0 || rep.Server.IdleCPUPercent == nil {
			t.Errorf("server: %+v", rep.Server)
		}
	}
	if got := strings.Join(names, " "); got != want {
		t.Errorf("phases %q, want %q", got, want)
	}

	// Nothing of the run is left.
	c := srv.Client(t, testToken)
	page, err := c.Tenants().List(context.Background(), client.ListOptions{NamePrefix: o.prefix})
	if err != nil || len(page.Tenants) != 0 {
		t.Errorf("after the run: %v, %d tenants left", err, len(page.Tenants))
	}
}

func TestRunKeep(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true, Tokens: map[string]string{"ops": testToken}})
	o := testOptions(t, srv)
	o.keep, o.json, o.tenants, o.idle = true, false, 10, 0
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "requests ") || !strings.Contains(stdout.String(), "reads at rest") {
		t.Errorf("no table:\n%s", stdout.String())
	}
	n := 0
	for tn, err := range srv.Client(t, testToken).Tenants().All(context.Background(), client.ListOptions{NamePrefix: o.prefix}) {
		if err != nil {
			t.Fatal(err)
		}
		if tn.Status != client.StatusReady {
			t.Errorf("%s is %s", tn.Name, tn.Status)
		}
		n++
	}
	if n != 10 {
		t.Errorf("%d tenants kept, want 10", n)
	}

	// The same prefix again is refused before anything is created.
	err := run(context.Background(), o, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "already has it") {
		t.Errorf("a used prefix: %v", err)
	}
}

func TestRunRefusesBeforeCreating(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Tokens: map[string]string{"ops": testToken}})
	for _, tt := range []struct {
		name   string
		change func(*options)
		want   string
	}{
		{"no token", func(o *options) { o.token = "" }, "401"},
		{"a config the provider refuses", func(o *options) { o.config = json.RawMessage(`{"image":7}`) }, "invalid_compute_config"},
		{"a pid that is not running", func(o *options) { o.pid = 1 << 30 }, "--pid"},
		{"a database pid that is not running", func(o *options) { o.dbPid = 1 << 30 }, "--db-pid"},
		{"no server", func(o *options) { o.address = "127.0.0.1:1" }, "reach the API"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t, srv)
			tt.change(&o)
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := run(ctx, o, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one saying %q", err, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("a report of a run that did not start:\n%s", stdout.String())
			}
		})
	}
	page, err := srv.Client(t, testToken).Tenants().List(context.Background(), client.ListOptions{})
	if err != nil || len(page.Tenants) != 0 {
		t.Errorf("%v, %d tenants created", err, len(page.Tenants))
	}
}
