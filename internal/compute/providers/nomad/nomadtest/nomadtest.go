package nomadtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/testbin"
)

const (
	// Version is the Nomad release the agent is built from; it matches
	// NOMAD in testservers/build (see TestVersionsAgree).
	Version = "v1.10.0"

	// EnvBin names the variable that points at a directory holding the
	// nomad binary, in place of the cache.
	EnvBin = "LANDLORD_NOMAD_BIN"

	// EnvRequire names the variable that, set to 1, turns "no Nomad agent
	// here" skips into failures.
	EnvRequire = "LANDLORD_REQUIRE_NOMAD"
)

var (
	mainCalled atomic.Bool

	agentOnce sync.Once
	theAgent  *Agent
	agentErr  error
)

// Main runs the tests of m, then stops the agent the tests started, if
// any, removes what it left behind, and ends dockertest's run (its echo
// images and lock).
// It returns the exit code for os.Exit.
func Main(m *testing.M) int {
	mainCalled.Store(true)
	code := m.Run()
	agentOnce.Do(func() { agentErr = errors.New("nomadtest: stopped") })
	if theAgent != nil {
		if err := theAgent.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "nomadtest: %v\n", err)
		}
	}
	dockertest.End()
	return code
}

// Start returns the binary's agent, starting it on first use. It skips or
// fails t when the agent cannot be had (see the package doc).
func Start(t testing.TB) *Agent {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("nomadtest: the package's TestMain must run the tests through nomadtest.Main, which stops the agent afterwards:\n\tfunc TestMain(m *testing.M) { os.Exit(nomadtest.Main(m)) }")
	}
	agentOnce.Do(func() {
		bin, err := binPath()
		if err != nil {
			agentErr = err
			return
		}
		begin := time.Now()
		theAgent, agentErr = start(bin, false)
		if agentErr == nil {
			t.Logf("nomadtest: Nomad %s agent at %s ready in %v", Version, theAgent.Address, time.Since(begin).Round(time.Millisecond))
		}
	})
	if agentErr != nil {
		report(t, agentErr)
	}
	return theAgent
}

// StartWithACL starts an agent of t's own with ACLs enabled and
// bootstrapped (Client carries the management token), for tests of what
// a token with a policy may do; it stops when t ends. It skips or fails t
// as Start does.
func StartWithACL(t testing.TB) *Agent {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("nomadtest: the package's TestMain must run the tests through nomadtest.Main")
	}
	bin, err := binPath()
	if err != nil {
		report(t, err)
		return nil
	}
	begin := time.Now()
	a, err := start(bin, true)
	if err != nil {
		t.Fatalf("nomadtest: %v", err)
	}
	t.Cleanup(func() {
		if err := a.stop(); err != nil {
			t.Errorf("nomadtest: %v", err)
		}
	})
	t.Logf("nomadtest: Nomad %s agent with ACLs at %s ready in %v", Version, a.Address, time.Since(begin).Round(time.Millisecond))
	return a
}

// binPath finds the nomad binary: in EnvBin, else in the cache
// testservers/build writes. Its absence wraps testbin.ErrAbsent.
func binPath() (string, error) {
	dir, err := testbin.Find(EnvBin, "nomad-"+Version, "nomad")
	if err != nil {
		return "", fmt.Errorf("the Nomad test agent is %w", err)
	}
	return filepath.Join(dir, "nomad"), nil
}

// report skips or fails t for err.
func report(t testing.TB, err error) {
	t.Helper()
	testbin.Report(t, "nomadtest", err, EnvRequire, "To fix: run testservers/build nomad (about 4 minutes cold, once per machine; needs gcc).")
}
