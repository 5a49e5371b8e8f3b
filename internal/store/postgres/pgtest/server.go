package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

const (
	// debianBinDir is where Debian's postgresql-15 package puts the server.
	debianBinDir = "/usr/lib/postgresql/15/bin"
	// superuser is the role a throwaway cluster is made with.
	superuser = "postgres"
)

// errStopped reports that the binary's cluster is gone: Main has returned.
var errStopped = errors.New("the PostgreSQL cluster has been stopped (is NewDatabase called after TestMain's m.Run?)")

// server is where databases are created: a throwaway cluster or the server
// named by EnvURL. Clients reach it through psql.
type server struct {
	// admin connects as a role that may create databases, to a database
	// that is not one of ours.
	admin *url.URL
	psql  string
	// local is the cluster this binary started; nil for EnvURL.
	local *cluster

	mu      sync.RWMutex
	stopped bool
}

// externalServer uses the server at raw, the value of EnvURL.
func externalServer(raw string) (*server, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, which may hold a password.
		return nil, fmt.Errorf("%s is not a URL: %w", EnvURL, errors.Unwrap(err))
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		// Not u.Redacted(): a key=value string would show its password.
		return nil, fmt.Errorf("%s: want a postgres:// or postgresql:// URL, not scheme %q (key=value connection strings are not supported)", EnvURL, u.Scheme)
	}
	psql, err := findPSQL("")
	if err != nil {
		return nil, err
	}
	return &server{admin: u, psql: psql}, nil
}

// localServer starts a throwaway cluster with the caller's settings.
func localServer(settings ...string) (*server, error) {
	c, err := startCluster(settings...)
	if err != nil {
		return nil, err
	}
	psql, err := findPSQL(c.binDir)
	if err != nil {
		return nil, errors.Join(err, c.stop())
	}
	u := &url.URL{
		Scheme:   "postgres",
		User:     url.User(superuser),
		Host:     fmt.Sprintf("127.0.0.1:%d", c.port),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	return &server{admin: u, psql: psql, local: c}, nil
}

// findPSQL looks for psql in binDir, if given, then on PATH, then where
// Debian puts PostgreSQL 15.
func findPSQL(binDir string) (string, error) {
	if binDir != "" {
		p := filepath.Join(binDir, "psql")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("psql"); err == nil {
		return p, nil
	}
	p := filepath.Join(debianBinDir, "psql")
	if _, err := os.Stat(p); err != nil {
		return "", unavailable(fmt.Errorf("psql, which pgtest runs to create databases, is on neither PATH nor in %s (Debian: apt-get install postgresql-client-15)", debianBinDir))
	}
	return p, nil
}

// createDatabase creates database name from template0, which nobody can
// be connected to, so concurrent creations never find their template busy.
func (s *server) createDatabase(ctx context.Context, name string) error {
	return s.exec(ctx, "CREATE DATABASE "+quoteIdent(name)+" TEMPLATE template0")
}

// dropDatabase drops database name, disconnecting whoever still uses it.
// It returns errStopped, and does nothing, once the cluster is gone.
func (s *server) dropDatabase(ctx context.Context, name string) error {
	return s.exec(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(name)+" WITH (FORCE)")
}

// exec runs one SQL statement through psql. The read lock keeps stop from
// pulling the cluster from under it.
func (s *server) exec(ctx context.Context, sql string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stopped {
		return errStopped
	}
	cmd := exec.CommandContext(ctx, s.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", s.admin.String(), "-c", sql)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("psql -d %s -c %q: %w: %s", s.admin.Redacted(), sql, err, bytes.TrimSpace(out))
	}
	return nil
}

// databaseURL is the admin URL pointed at database name.
func (s *server) databaseURL(name string) string {
	u := *s.admin
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// stop stops the local cluster, if any, and makes further use fail with
// errStopped.
func (s *server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	if s.local == nil {
		return nil
	}
	return s.local.stop()
}
