package docker

import (
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// TestConfigCheckedOncePerStep: a create that reaches ready on a real
// Engine validates the config against the schema, and has the provider read
// it, once where it enters the API and at most once per reconcile after
// that; the provider never parses it again.
func TestConfigCheckedOncePerStep(t *testing.T) {
	images := dockertest.EchoImage(t)
	cleanupByLabel(t, dockertest.Engine(t))
	p := mustProvider(t, &providertest.LogBuffer{})
	c := clienttest.CountChecks(t, p, echoConfig(images[0], "counted"), 90*time.Second)
	t.Logf("checks: %+v", c)
	if err := c.Err(); err != nil {
		t.Error(err)
	}
}
