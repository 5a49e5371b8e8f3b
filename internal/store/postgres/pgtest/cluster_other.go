//go:build !unix

package pgtest

import (
	"errors"
	"fmt"
	"testing"
)

// cluster stands in for the throwaway cluster, which needs a Unix system.
type cluster struct {
	binDir string
	port   int
}

func startCluster(...string) (*cluster, error) {
	return nil, unavailable(fmt.Errorf("pgtest starts throwaway clusters only on Unix systems; %s names a server to use instead", EnvURL))
}

func (c *cluster) pid() int { return 0 }

func (c *cluster) stop() error { return errors.ErrUnsupported }

// Tool skips t: the tests run PostgreSQL on Unix only.
func Tool(t testing.TB, name string) string {
	t.Skipf("pgtest: %s: the tests run PostgreSQL on Unix only", name)
	return ""
}
