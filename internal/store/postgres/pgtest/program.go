package pgtest

import (
	"context"
	"errors"
	"fmt"
)

// ErrUnavailable is wrapped by the errors of StartCluster that mean that no
// cluster can be had on this machine (no PostgreSQL binaries, no OS user to
// run them as, initdb or the server failing to start), as opposed to a
// cluster that started and then failed.
var ErrUnavailable = errors.New("pgtest: no PostgreSQL server")

// Cluster is a throwaway PostgreSQL cluster for a program rather than a
// test: the cluster NewDatabase starts on first use (see the package
// documentation), started and stopped by its caller. cmd/landlord-load
// measures landlord on one.
type Cluster struct{ s *server }

// StartCluster starts a throwaway cluster and waits until it accepts
// connections. Each of settings, "name=value", is given to postgres with -c
// after pgtest's own, which it overrides: "fsync=on" makes commits durable
// again. Errors that mean no cluster can be had here wrap ErrUnavailable.
// Stop stops it; on Linux it also stops when the calling process dies.
func StartCluster(settings ...string) (*Cluster, error) {
	s, err := localServer(settings...)
	if err != nil {
		return nil, fmt.Errorf("pgtest: start a cluster: %w", err)
	}
	return &Cluster{s: s}, nil
}

// PID is the process id of the cluster's postmaster, the parent of every
// other process of the cluster.
func (c *Cluster) PID() int { return c.s.local.pid() }

// CreateDatabase creates an empty database called name and returns its
// connection URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := c.s.createDatabase(ctx, name); err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	return c.s.databaseURL(name), nil
}

// DropDatabase drops the database called name, disconnecting whoever still
// uses it.
func (c *Cluster) DropDatabase(ctx context.Context, name string) error {
	if err := c.s.dropDatabase(ctx, name); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// Stop stops the cluster and removes its files, databases and all.
func (c *Cluster) Stop() error { return c.s.stop() }
