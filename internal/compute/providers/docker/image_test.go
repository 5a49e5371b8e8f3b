package docker

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

func TestMain(m *testing.M) { os.Exit(dockertest.Main(m, testBase)) }

// The registry's refusals are terminal; the Engine's own trouble, even when
// it reads "denied", may pass and is retried.
func TestPullFailureClasses(t *testing.T) {
	for msg, terminal := range map[string]bool{
		"pull access denied for acme/app, repository does not exist or may require 'docker login': denied: requested access to the resource is denied": true,
		"unauthorized: authentication required":                                                      true,
		"manifest unknown: manifest unknown":                                                         true,
		"open /var/lib/docker/tmp/GetImageBlob123: permission denied":                                false,
		"received unexpected HTTP status: 503 Service Unavailable":                                   false,
		"read tcp 10.0.0.2:41234->10.0.0.1:443: read: connection reset by peer":                      false,
		"Get \"https://registry.example/v2/\": net/http: TLS handshake timeout":                      false,
		"Get \"https://registry.example/v2/\": net/http: request canceled (Client.Timeout exceeded)": false,
	} {
		err := pullFailure("acme/app:1", errors.New(msg))
		if got := provider.IsTerminal(err); got != terminal {
			t.Errorf("pullFailure(%q): terminal = %v, want %v", msg, got, terminal)
		}
	}
}

// What the Engine says when it cannot resolve or connect to a registry
// (tried again for a grace, then terminal) differs from a registry that
// answered and failed, or a transfer that broke off (retried by the
// controller).
func TestPullOffline(t *testing.T) {
	for msg, want := range map[string]bool{
		"Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io on 10.255.255.53:53: no such host": true,
		"Get \"https://registry.example/v2/\": dial tcp: lookup registry.example on 127.0.0.53:53: server misbehaving":      true,
		"Get \"https://registry.example/v2/\": dial tcp: lookup registry.example: Temporary failure in name resolution":     true,
		"Get \"http://127.0.0.1:1/v2/\": dial tcp 127.0.0.1:1: connect: connection refused":                                 true,
		"Get \"https://registry.example/v2/\": dial tcp 10.0.0.1:443: connect: network is unreachable":                      true,
		"Get \"https://registry.example/v2/\": dial tcp 10.0.0.1:443: i/o timeout":                                          true,
		"Get \"https://registry.example/v2/\": proxyconnect tcp: dial tcp 10.0.0.9:3128: connect: no route to host":         true,
		"received unexpected HTTP status: 500 Internal Server Error":                                                        false,
		"read tcp 10.0.0.2:41234->10.0.0.1:443: i/o timeout":                                                                false,
		"toomanyrequests: You have reached your pull rate limit.":                                                           false,
		"Get \"https://registry.example/v2/\": net/http: TLS handshake timeout":                                             false,
		"failed to register layer: open /var/lib/docker/overlay2/x: no space left on device":                                false,
	} {
		if got := offline(errors.New(msg)); got != want {
			t.Errorf("offline(%q) = %v, want %v", msg, got, want)
		}
	}
	err := registryOffline("nginx:1.27-alpine", 5, 15*time.Second, errors.New("no such host"))
	if !errors.Is(err, errImageMissing) || !errors.Is(err, errRegistryOffline) || !provider.IsTerminal(err) {
		t.Errorf("registryOffline = %v, want terminal, errImageMissing and errRegistryOffline", err)
	}
	for _, says := range []string{"nginx:1.27-alpine is not on the engine", "registry docker.io", "5 pulls over 15s", "docker pull", "docker load", "pull_policy", "registry mirror"} {
		if !strings.Contains(err.Error(), says) {
			t.Errorf("registryOffline does not say %q: %v", says, err)
		}
	}
}
