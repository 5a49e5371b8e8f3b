package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestEndToEnd builds the binary, starts `landlord serve` on a temp dir and
// a free port with the mock provider, and drives the CLI through the
// README's quickstart.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "landlord")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr := servetest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	server := exec.CommandContext(ctx, bin, "serve", "--listen", addr, "--database", filepath.Join(dir, "landlord.db"), "--provider", "mock")
	server.Dir = dir
	var serverLog bytes.Buffer
	server.Stderr = &serverLog
	server.Cancel = func() error { return server.Process.Signal(os.Interrupt) }
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = server.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", serverLog.String())
		}
	})
	waitHealthy(t, "http://"+addr)

	cli := func(wantExit int, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LANDLORD_ADDR=http://"+addr)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("landlord %s: %v", strings.Join(args, " "), err)
		}
		if code != wantExit {
			t.Fatalf("landlord %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantExit, stdout.String(), stderr.String())
		}
		return stdout.String() + stderr.String()
	}

	// Create with JSON, YAML and @file configs, and wait.
	cli(0, "create", "acme", "--config", `{"image":"ghcr.io/example/app:1.4","ports":[{"container_port":8080}]}`, "--wait", "--timeout", "30s")
	cli(0, "create", "beta", "--config", "image: ghcr.io/example/app:1.4\nenv:\n  MODE: yaml\n", "--label", "tier=gold", "--wait")
	if err := os.WriteFile(filepath.Join(dir, "gamma.yaml"), []byte("image: ghcr.io/example/app:2.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli(0, "create", "gamma", "--config", "@gamma.yaml", "--wait")

	table := cli(0, "list")
	for _, want := range []string{"NAME", "STATUS", "acme", "beta", "gamma", "ready"} {
		if !strings.Contains(table, want) {
			t.Errorf("list table lacks %q:\n%s", want, table)
		}
	}
	var listed []map[string]any
	out := cli(0, "list", "-o", "json")
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		var wrapped struct{ Tenants []map[string]any }
		if err := json.Unmarshal([]byte(out), &wrapped); err != nil || len(wrapped.Tenants) != 3 {
			t.Errorf("list -o json is not the tenants: %s", out)
		}
	} else if len(listed) != 3 {
		t.Errorf("list -o json has %d tenants", len(listed))
	}
	if got := cli(0, "list", "--label", "tier=gold"); !strings.Contains(got, "beta") || strings.Contains(got, "acme") {
		t.Errorf("list --label: %s", got)
	}
	if got := cli(0, "get", "acme", "-o", "json"); !strings.Contains(got, `"status": "ready"`) && !strings.Contains(got, `"status":"ready"`) {
		t.Errorf("get: %s", got)
	}
	cli(0, "set", "acme", "--config", `{"image":"ghcr.io/example/app:1.5"}`, "--wait")
	if got := cli(0, "get", "acme", "-o", "yaml"); !strings.Contains(got, "app:1.5") || !strings.Contains(got, "generation: 2") {
		t.Errorf("get after set: %s", got)
	}
	history := cli(0, "history", "acme")
	for _, want := range []string{"created", "updated", "ready"} {
		if !strings.Contains(history, want) {
			t.Errorf("history lacks %q:\n%s", want, history)
		}
	}
	cli(0, "delete", "gamma", "--wait")
	cli(3, "get", "gamma")

	// Mistakes: the pointer is printed, the exit codes say what happened.
	if got := cli(1, "create", "bad", "--config", `{"image": 5}`); !strings.Contains(got, "/compute_config/image") {
		t.Errorf("an invalid config does not print its pointer: %s", got)
	}
	cli(3, "get", "nobody")
	cli(3, "delete", "nobody")
	cli(2, "create")
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	poll.Until(t, "landlord serve answers", 30*time.Second, func() (bool, string) {
		res, err := http.Get(base + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		res.Body.Close()
		return true, ""
	})
}
