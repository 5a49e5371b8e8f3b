package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

func mustTenantJSON(t *testing.T, out string) client.Tenant {
	t.Helper()
	var tn client.Tenant
	if err := json.Unmarshal([]byte(out), &tn); err != nil {
		t.Fatalf("not a tenant: %v\n%s", err, out)
	}
	return tn
}

func TestCreate(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	dir := t.TempDir()
	file := filepath.Join(dir, "app.yaml")
	writeTestFile(t, file, "image: nginx:latest\nenv:\n  MODE: prod\n")

	t.Run("JSON, table", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, "", "create", "json-tenant", "--config", `{"image": "nginx:latest"}`)
		mustContain(t, "stdout", res.stdout, "Name:", "json-tenant", "Status:", "requested", "Provider:", "mock", "Compute config:\n  image: nginx:latest\n")
	})
	t.Run("YAML, labels, -o json", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, "", "create", "yaml-tenant", "--config", "image: nginx:latest\nenv: {A: b}",
			"--label", "tier=gold", "--label", "team=a", "--annotation", "owner=ops", "-o", "json")
		tn := mustTenantJSON(t, res.stdout)
		if tn.Name != "yaml-tenant" || tn.Labels["tier"] != "gold" || tn.Labels["team"] != "a" || tn.Annotations["owner"] != "ops" {
			t.Errorf("created %+v", tn)
		}
		var config map[string]any
		if err := json.Unmarshal(tn.ComputeConfig, &config); err != nil || config["image"] != "nginx:latest" || config["env"].(map[string]any)["A"] != "b" {
			t.Errorf("compute_config %s", tn.ComputeConfig)
		}
	})
	t.Run("@file, -o yaml", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, "", "create", "file-tenant", "--config", "@"+file, "-o", "yaml")
		var tn map[string]any
		if err := yaml.Unmarshal([]byte(res.stdout), &tn); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, res.stdout)
		}
		if tn["name"] != "file-tenant" || tn["status"] != "requested" {
			t.Errorf("created %v", tn)
		}
	})
	t.Run("file://", func(t *testing.T) {
		mustRunCLI(t, srv, exitOK, "", "create", "url-tenant", "--config", "file://"+file)
	})
	t.Run("stdin", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, `{"image": "from-stdin"}`, "create", "stdin-tenant", "--config", "-", "-o", "json")
		if tn := mustTenantJSON(t, res.stdout); !strings.Contains(string(tn.ComputeConfig), "from-stdin") {
			t.Errorf("compute_config %s", tn.ComputeConfig)
		}
	})
	t.Run("--provider", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, "", "create", "provider-tenant", "--config", "image: a", "--provider", "mock", "-o", "json")
		if tn := mustTenantJSON(t, res.stdout); tn.ComputeProvider != "mock" {
			t.Errorf("provider %s", tn.ComputeProvider)
		}
		res = mustRunCLI(t, srv, exitFailure, "", "create", "other-provider", "--config", "image: a", "--provider", "nope")
		mustContain(t, "stderr", res.stderr, "landlord: create tenant other-provider: ", "(422 provider_not_found)", "\n  /compute_config/compute_provider: ")
	})
	t.Run("dry run", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, "", "create", "dry", "--config", "image: a", "--dry-run")
		mustContain(t, "stdout", res.stdout, "Dry run: nothing stored.", "Name:", "dry", "Effective config:\n", "FROM_DEFAULTS: \"yes\"")
		for _, stored := range []string{"ID:", "Status:", "requested", "Version:", "Created:"} {
			if strings.Contains(res.stdout, stored) {
				t.Errorf("a dry run shows %q, as if it were stored:\n%s", stored, res.stdout)
			}
		}
		for _, format := range []string{"json", "yaml"} {
			res := mustRunCLI(t, srv, exitOK, "", "create", "dry", "--config", "image: a", "--dry-run", "-o", format)
			var would map[string]any
			if err := yaml.Unmarshal([]byte(res.stdout), &would); err != nil { // JSON is YAML too
				t.Fatalf("-o %s: %v\n%s", format, err, res.stdout)
			}
			if _, ok := would["id"]; ok || would["name"] != "dry" || would["effective_config"] == nil {
				t.Errorf("-o %s: %v, want the tenant with no id", format, would)
			}
			if res.stderr != "dry run: nothing stored\n" {
				t.Errorf("-o %s: stderr %q", format, res.stderr)
			}
		}
		mustRunCLI(t, srv, exitNotFound, "", "get", "dry")
	})
	t.Run("invalid config", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "create", "bad", "--config", `{"image": 7, "bogus": true}`)
		mustContain(t, "stderr", res.stderr,
			"landlord: create tenant bad: compute_config is not valid for its provider (422 invalid_compute_config)\n",
			"\n  /compute_config/bogus: ", "\n  /compute_config/image: must be a string")
	})
	t.Run("malformed YAML", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "create", "bad", "--config", "image: a\nenv:\n  A: 1\n B: 2\n")
		mustContain(t, "stderr", res.stderr, "landlord: --config: line 4, column 2: YAML: did not find expected key")
	})
	t.Run("name taken", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "create", "json-tenant", "--config", "image: a")
		mustContain(t, "stderr", res.stderr, "(409 name_taken)", "\n  /name: is taken")
	})
	t.Run("bad name", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "create", "Not_A_Name", "--config", "image: a")
		mustContain(t, "stderr", res.stderr, "(400 invalid_name)", "\n  /name: ")
	})
	for name, args := range map[string][]string{
		"no config":         {"create", "x"},
		"no name":           {"create", "--config", "image: a"},
		"two names":         {"create", "x", "y", "--config", "image: a"},
		"bad output":        {"create", "x", "--config", "image: a", "-o", "xml"},
		"bad label":         {"create", "x", "--config", "image: a", "--label", "tier"},
		"timeout, no wait":  {"create", "x", "--config", "image: a", "--timeout", "1s"},
		"dry run and wait":  {"create", "x", "--config", "image: a", "--dry-run", "--wait"},
		"provider conflict": {"create", "x", "--config", "compute_provider: mock", "--provider", "docker"},
		"unknown flag":      {"create", "x", "--config", "image: a", "--bogus"},
	} {
		t.Run("usage: "+name, func(t *testing.T) {
			mustRunCLI(t, srv, exitUsage, "", args...)
		})
	}
}

func TestCreateWait(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})

	t.Run("ready", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, "", "create", "acme", "--config", "image: a", "--wait", "--timeout", "30s")
		mustContain(t, "stdout", res.stdout, "Status:", "ready")
		mustContain(t, "progress", res.stderr, "acme: requested\n", "acme: ready\n")
		if strings.Contains(res.stderr, "\r") {
			t.Errorf("progress rewrote lines without a terminal:\n%q", res.stderr)
		}
	})
	t.Run("failed", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "create", "broken", "--config", `{"image":"a","x-mock":{"fail":"terminal"}}`, "--wait", "--timeout", "30s")
		mustContain(t, "stderr", res.stderr, "broken: failed", "landlord: tenant broken failed: ", "injected terminal failure")
	})
	t.Run("timeout", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitTimeout, "", "create", "slow", "--config", `{"image":"a","x-mock":{"start_after":"1h"}}`, "--wait", "--timeout", "600ms")
		mustContain(t, "stderr", res.stderr, "landlord: gave up waiting for tenant ", " after 600ms: it is still provisioning")
	})
	t.Run("terminal progress", func(t *testing.T) {
		defer func(f func(io.Writer) bool) { stderrIsTerminal = f }(stderrIsTerminal)
		stderrIsTerminal = func(io.Writer) bool { return true }
		res := mustRunCLI(t, srv, exitOK, "", "create", "tty", "--config", "image: a", "--wait", "--timeout", "30s")
		mustContain(t, "progress", res.stderr, "\r\x1b[K[", "] tty: requested", "tty: ready")
		if !strings.HasSuffix(res.stderr, "\n") || strings.Count(res.stderr, "\n") != 1 {
			t.Errorf("terminal progress is not one line rewritten:\n%q", res.stderr)
		}
	})
}
