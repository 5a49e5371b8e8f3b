package docker

import (
	"errors"
	"os"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
)

func TestMain(m *testing.M) { os.Exit(dockertest.Main(m, testBase)) }

// The registry's refusals are terminal; the Engine's own trouble, even when
// it reads "denied", may pass and is retried.
func TestPullFailureClasses(t *testing.T) {
	for msg, terminal := range map[string]bool{
		"pull access denied for acme/app, repository does not exist or may require 'docker login': denied: requested access to the resource is denied": true,
		"unauthorized: authentication required":                                                    true,
		"manifest unknown: manifest unknown":                                                       true,
		"open /var/lib/docker/tmp/GetImageBlob123: permission denied":                              false,
		"Get \"https://registry.example/v2/\": dial tcp 10.0.0.1:443: connect: connection refused": false,
	} {
		err := pullFailure("acme/app:1", errors.New(msg))
		if got := compute.IsTerminal(err); got != terminal {
			t.Errorf("pullFailure(%q): terminal = %v, want %v", msg, got, terminal)
		}
	}
}
