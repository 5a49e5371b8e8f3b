package chaos_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	dockerclient "github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// TestMain runs the tests through pgtest.Main, which stops the PostgreSQL
// cluster the PostgreSQL runs started, if any. The tests that run tenants
// on the Docker Engine name what they create after this run
// (dockertest.Prefix(moveKillBase)): what a crashed run left is swept
// first, and this run's containers, networks and echo images are removed
// last (dockertest.End).
func TestMain(m *testing.M) {
	if cli, err := dockerclient.New(dockerclient.FromEnv); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := cli.Ping(ctx, dockerclient.PingOptions{NegotiateAPIVersion: true}); err == nil {
			if _, err := dockertest.Sweep(ctx, cli, moveKillBase); err != nil {
				fmt.Fprintf(os.Stderr, "dockertest: sweep what ended runs left: %v\n", err)
			}
		}
		cancel()
		_ = cli.Close()
	}
	code := pgtest.Main(m)
	dockertest.End(moveKillBase)
	os.Exit(code)
}

// left is how long ctx, the bound of a test, has left: how long a wait in
// that test may take.
func left(ctx context.Context) time.Duration {
	deadline, _ := ctx.Deadline()
	return time.Until(deadline)
}
