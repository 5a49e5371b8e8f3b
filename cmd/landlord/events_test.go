package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/poll"
)

// syncBuffer is a buffer a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runningCLI is a run of the CLI in the background, until its context
// ends.
type runningCLI struct {
	stdout, stderr syncBuffer
	cancel         context.CancelFunc
	done           chan struct{}
	err            error
}

// startCLI runs the landlord command with args against srv in the
// background, as runCLI does; stop ends it.
func startCLI(t *testing.T, srv *clienttest.Server, args ...string) *runningCLI {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningCLI{cancel: cancel, done: make(chan struct{})}
	root := newRootCommand()
	root.SetArgs(append(args, "--addr", srv.URL))
	root.SetOut(&r.stdout)
	root.SetErr(&r.stderr)
	root.SetIn(strings.NewReader(""))
	root.SetContext(ctx)
	go func() {
		defer close(r.done)
		r.err = execute(root)
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// waitOutput waits until stdout holds every one of want.
func (r *runningCLI) waitOutput(t *testing.T, want ...string) string {
	t.Helper()
	var out string
	poll.Until(t, fmt.Sprintf("output holding %q", want), 10*time.Second, func() (bool, string) {
		out = r.stdout.String()
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false, "stdout:\n" + out + "\nstderr:\n" + r.stderr.String()
			}
		}
		return true, ""
	})
	return out
}

// stop ends the run and returns its exit code.
func (r *runningCLI) stop() int {
	r.cancel()
	<-r.done
	return exitCode(r.err)
}

// landlord events lists the feed, filtered and paged, and says how to read
// on.
func TestEventsVerb(t *testing.T) {
	ctx := t.Context()
	srv := clienttest.NewServer(t, clienttest.Options{Events: true, Controller: true})
	c := srv.Client(t, "")
	for _, name := range []string{"acme", "beta"} {
		tn, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: name, ComputeConfig: []byte(`{"image":"a"}`)}, client.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Tenants().Wait(ctx, tn.ID, client.UntilReady, nil); err != nil {
			t.Fatal(err)
		}
	}
	feed, err := c.Events().List(ctx, client.EventListOptions{})
	if err != nil || len(feed.Events) != 4 {
		t.Fatalf("the feed: %+v, %v", feed, err)
	}

	res := mustRunCLI(t, srv, exitOK, "", "events")
	mustContain(t, "events", res.stdout, "SEQUENCE", "TIME", "TYPE", "SUBJECT", "TENANT", "STATUS",
		"landlord.tenant.created", "landlord.tenant.ready", "acme", "beta", "ready", feed.Events[0].Subject)
	if strings.Contains(res.stderr, "more events") {
		t.Errorf("a page that is not full says more follow:\n%s", res.stderr)
	}

	res = mustRunCLI(t, srv, exitOK, "", "events", "--type", "landlord.tenant.ready")
	if strings.Contains(res.stdout, "landlord.tenant.created") || strings.Count(res.stdout, "landlord.tenant.ready") != 2 {
		t.Errorf("--type landlord.tenant.ready:\n%s", res.stdout)
	}

	res = mustRunCLI(t, srv, exitOK, "", "events", "--page-size", "1", "--after", feed.Events[0].Sequence)
	if lines := strings.Split(strings.TrimSpace(res.stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], feed.Events[1].Sequence+" ") {
		t.Errorf("a page of one after the first event:\n%s", res.stdout)
	}
	mustContain(t, "stderr", res.stderr, "more events may follow: landlord events --after "+feed.Events[1].Sequence)

	res = mustRunCLI(t, srv, exitOK, "", "events", "--all-pages", "--page-size", "1", "-o", "json")
	var all client.EventFeed
	if err := json.Unmarshal([]byte(res.stdout), &all); err != nil || len(all.Events) != 4 || all.Next != feed.Events[3].Sequence {
		t.Errorf("--all-pages -o json: %v\n%s", err, res.stdout)
	}

	res = mustRunCLI(t, srv, exitOK, "", "events", "--after", feed.Events[3].Sequence)
	mustContain(t, "stderr", res.stderr, "no events after sequence "+feed.Events[3].Sequence, "landlord events --follow --after "+feed.Events[3].Sequence)

	for _, bad := range [][]string{
		{"events", "--type", "landlord.tenant.readied"},
		{"events", "--after", "yesterday"},
		{"events", "--follow", "--all-pages"},
		{"events", "--page-size", "0"},
	} {
		res := mustRunCLI(t, srv, exitUsage, "", bad...)
		if bad[1] == "--type" {
			mustContain(t, "stderr", res.stderr, `--type "landlord.tenant.readied" is not an event type; the types are landlord.tenant.created,`)
		}
	}
}

// landlord events --follow shows the events there are, then each as it is
// written, until interrupted; -o json one line of JSON per event.
func TestEventsFollow(t *testing.T) {
	ctx := t.Context()
	srv := clienttest.NewServer(t, clienttest.Options{Events: true})
	c := srv.Client(t, "")
	create := func(name string) {
		t.Helper()
		if _, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: name, ComputeConfig: []byte(`{"image":"a"}`)}, client.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("acme")
	table := startCLI(t, srv, "events", "--follow")
	jsonl := startCLI(t, srv, "events", "--follow", "-o", "json", "--type", "landlord.tenant.created")
	table.waitOutput(t, "SEQUENCE", "acme")
	create("beta")
	if _, err := c.Tenants().Delete(ctx, "acme", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out := table.waitOutput(t, "beta", "landlord.tenant.deletion_requested")
	if strings.Count(out, "SEQUENCE") != 1 {
		t.Errorf("the header is repeated:\n%s", out)
	}
	if code := table.stop(); code != exitOK {
		t.Errorf("--follow interrupted: exit %d, want 0; stderr:\n%s", code, table.stderr.String())
	}

	out = jsonl.waitOutput(t, `"subject"`, "beta")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("-o json printed %d lines, want one per created tenant:\n%s", len(lines), out)
	}
	for _, line := range lines {
		var e client.CloudEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Type != client.EventTenantCreated || e.SpecVersion != "1.0" {
			t.Errorf("line %q: %+v, %v; want a created CloudEvent", line, e, err)
		}
	}
	jsonl.stop()
}
