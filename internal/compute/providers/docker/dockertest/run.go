package dockertest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Runs. Test binaries of one package, started by several people or CI jobs
// at once, share the Engine; each names what it creates after its run, so
// that its cleanup removes its own resources only, and a later run can tell
// the leftovers of a run that ended (crashed, killed) from those of one that
// still runs.
//
// A run id is 10 characters [0-9a-z]: 4 of a hash of the host and the lock
// directory, then 6 random ones. The run keeps the file
// landlord-dockertest-<id>.lock in the lock directory (os.TempDir) locked
// (flock) while it runs; the kernel releases the lock however the process
// ends.
const (
	runIDLen    = 10
	hostTagLen  = 4
	lockPrefix  = "landlord-dockertest-"
	lockSuffix  = ".lock"
	runAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

	// StaleAfter is how old the resources of a run that cannot be checked
	// (another host's, or made before runs had ids) must be before a sweep
	// removes them: far longer than any test binary runs.
	StaleAfter = 24 * time.Hour
)

// theRun is this process's run, made on first use.
var theRun = sync.OnceValues(func() (string, error) {
	dir := os.TempDir()
	id := hostTag(dir) + randomSuffix()
	return id, hold(dir, id)
})

// RunID returns this test process's run id (see Prefix), making and
// locking its lock file on first use. It panics when the lock file cannot
// be made: without it, another run could take this one's resources for a
// dead run's.
func RunID() string {
	id, err := theRun()
	if err != nil {
		panic(fmt.Sprintf("dockertest: lock the run's file: %v", err))
	}
	return id
}

// Prefix returns base-<run id>: the start of the names (and the label
// prefix) of everything this run creates under base, such as "lltest".
func Prefix(base string) string { return base + "-" + RunID() }

// hostTag tells apart the places whose lock files a run can check: a run
// with another tag ran on another host or with another lock directory.
func hostTag(dir string) string {
	host, _ := os.Hostname()
	sum := sha256.Sum256([]byte(host + "\x00" + dir))
	return hex.EncodeToString(sum[:])[:hostTagLen]
}

func randomSuffix() string {
	b := make([]byte, runIDLen-hostTagLen)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = runAlphabet[int(b[i])%len(runAlphabet)]
	}
	return string(b)
}

// lockPath is the lock file of run id in dir.
func lockPath(dir, id string) string { return filepath.Join(dir, lockPrefix+id+lockSuffix) }

// runOf returns the run id in name after base and a dash ("lltest-<id>-…"
// or "lltest-<id>.label"), or "" when name has none.
func runOf(name, base string) string {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(name, "/"), base+"-")
	if !ok || len(rest) < runIDLen {
		return ""
	}
	id := rest[:runIDLen]
	if len(rest) > runIDLen && rest[runIDLen] != '-' && rest[runIDLen] != '.' {
		return ""
	}
	if !validRunID(id) {
		return ""
	}
	return id
}

func validRunID(id string) bool {
	if len(id) != runIDLen {
		return false
	}
	for _, r := range id {
		if !strings.ContainsRune(runAlphabet, r) {
			return false
		}
	}
	return true
}

// runState is what a sweep knows of a run.
type runState int

const (
	runLive    runState = iota // its lock is held: keep its resources
	runEnded                   // its lock is free or gone: remove them
	runUnknown                 // cannot be checked here: remove them once stale
)

// ended decides whether a resource of run id (or of no known run, id ""),
// created at created, is left over: its run ended, or it cannot be checked
// and is older than StaleAfter.
func ended(dir, id string, created, now time.Time) bool {
	switch stateOf(dir, id) {
	case runEnded:
		return true
	case runUnknown:
		return now.Sub(created) > StaleAfter
	default:
		return false
	}
}

// stateOf checks run id's lock file in dir.
func stateOf(dir, id string) runState {
	if id == "" || id[:hostTagLen] != hostTag(dir) {
		return runUnknown
	}
	if id == RunID() {
		return runLive
	}
	return lockState(lockPath(dir, id))
}
