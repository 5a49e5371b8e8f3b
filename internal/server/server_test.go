package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dockerclient "github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

func TestServeRunsTheProduct(t *testing.T) {
	// No Docker Engine answers here, so serve falls back to the mock.
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-docker.sock"))
	cfg := config.Defaults()
	cfg.Listen = servetest.FreeAddr(t)
	cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
	logs := &providertest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, logs) }()
	base := "http://" + cfg.Listen

	poll.Until(t, "serve answers", 30*time.Second, func() (bool, string) {
		res, err := http.Get(base + "/healthz")
		if err != nil {
			return false, err.Error() + "\n" + logs.String()
		}
		res.Body.Close()
		return true, ""
	})
	res, err := http.Post(base+"/v1/tenants", "application/json", strings.NewReader(`{"name":"acme","compute_config":{"image":"example.com/app:1"}}`))
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("create: %v %v", res, err)
	}
	res.Body.Close()
	poll.Until(t, "the tenant becomes ready", 30*time.Second, func() (bool, string) {
		res, err := http.Get(base + "/v1/tenants/acme")
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Status string }
		_ = json.NewDecoder(res.Body).Decode(&got)
		res.Body.Close()
		return got.Status == "ready", got.Status + "\n" + logs.String()
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	for _, want := range []string{`no Docker Engine answers: using the mock provider`, `"msg":"landlord started"`, `"database":"sqlite:`, `"providers":"mock"`, `"auth":"none (loopback only)"`, `"msg":"partitions released"`, `"msg":"landlord stopped"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s", want)
		}
	}
	// The console records sessions in the database, so that sign-out ends
	// one on every replica.
	if strings.Contains(logs.String(), "sessions are not recorded") {
		t.Errorf("serve gives the console no session store:\n%s", logs)
	}
}

// With no compute block, serve runs tenants on the Docker Engine when one
// answers, and on the provider --provider names without asking Docker.
func TestServeChoosesTheProvider(t *testing.T) {
	dockerAnswers := dockerEngineAnswers(t)
	for _, tt := range []struct {
		name, provider, dockerHost string
		want                       string
	}{
		{name: "engine answers", want: "docker"},
		{name: "no engine", dockerHost: "unix:///nonexistent/docker.sock", want: "mock"},
		{name: "mock asked for", provider: "mock", want: "mock"},
		{name: "docker asked for without an engine", provider: "docker", dockerHost: "unix:///nonexistent/docker.sock", want: "docker"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == "docker" && tt.dockerHost == "" && !dockerAnswers {
				t.Skip("no Docker Engine answers (set LANDLORD_REQUIRE_DOCKER=1 to make this a failure)")
			}
			if tt.dockerHost != "" {
				t.Setenv("DOCKER_HOST", tt.dockerHost)
			}
			cfg := config.Defaults()
			cfg.Listen = servetest.FreeAddr(t)
			cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
			if tt.provider != "" {
				cfg.SetComputeDefault(tt.provider)
			}
			logs := serveUntilStarted(t, cfg)
			if want := `"providers":"` + tt.want + `"`; !strings.Contains(logs, want) {
				t.Errorf("the start-up line lacks %s:\n%s", want, logs)
			}
		})
	}
}

// dockerEngineAnswers reports whether the Docker Engine of the environment
// answers a ping; LANDLORD_REQUIRE_DOCKER=1 makes "no" a failure.
func dockerEngineAnswers(t *testing.T) bool {
	t.Helper()
	c, err := dockerclient.New(dockerclient.FromEnv)
	if err == nil {
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err = c.Ping(ctx, dockerclient.PingOptions{NegotiateAPIVersion: true}); err == nil {
			return true
		}
	}
	if os.Getenv("LANDLORD_REQUIRE_DOCKER") == "1" {
		t.Fatalf("no Docker Engine answers and LANDLORD_REQUIRE_DOCKER=1: %v", err)
	}
	return false
}
