package nomadtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
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
		theAgent, agentErr = start(bin)
		if agentErr == nil {
			t.Logf("nomadtest: Nomad %s agent at %s ready in %v", Version, theAgent.Address, time.Since(begin).Round(time.Millisecond))
		}
	})
	if agentErr != nil {
		report(t, agentErr)
	}
	return theAgent
}

// errAbsent marks the binary's absence: a skip, unless EnvRequire is set.
var errAbsent = errors.New("the Nomad test agent is not built")

// binPath finds the nomad binary: in EnvBin, else in the cache
// testservers/build writes.
func binPath() (string, error) {
	dir := os.Getenv(EnvBin)
	if dir == "" {
		cache := os.Getenv("LANDLORD_TESTBIN")
		if cache == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				return "", fmt.Errorf("%w: no cache directory: %w", errAbsent, err)
			}
			cache = filepath.Join(base, "landlord", "testbin")
		}
		dir = filepath.Join(cache, "nomad-"+Version)
	}
	bin := filepath.Join(dir, "nomad")
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: no executable nomad in %s", errAbsent, dir)
	}
	return bin, nil
}

// report skips or fails t for err.
func report(t testing.TB, err error) {
	t.Helper()
	if !errors.Is(err, errAbsent) {
		t.Fatalf("nomadtest: %v", err)
	}
	const fix = "To fix: run testservers/build nomad (about 4 minutes cold, once per machine; needs gcc)."
	required, perr := strconv.ParseBool(os.Getenv(EnvRequire))
	switch {
	case os.Getenv(EnvRequire) == "":
		t.Skipf("nomadtest: %v.\n%s\n(%s=1 makes this a failure.)", err, fix, EnvRequire)
	case perr != nil:
		t.Fatalf("nomadtest: %v.\n%s\n%s=%q is not a boolean.", err, fix, EnvRequire, os.Getenv(EnvRequire))
	case required:
		t.Fatalf("nomadtest: %v.\n%s\n%s is set, which makes this a failure rather than a skip.", err, fix, EnvRequire)
	default:
		t.Skipf("nomadtest: %v.\n%s", err, fix)
	}
}
