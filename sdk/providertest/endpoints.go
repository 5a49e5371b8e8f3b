package providertest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"testing"

	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// checkEndpoints checks the endpoints of a running workload: each address
// is host:port, or a URL whose scheme says what it is (mock://…) when the
// provider has nothing to dial, never an address nothing answers on. With
// Harness.DialEndpoints, every TCP host:port accepts a connection within
// the ready timeout.
func (s *suite) checkEndpoints(t *testing.T, st *provider.ComputeStatus) {
	t.Helper()
	for _, e := range st.Endpoints {
		host, port, err := net.SplitHostPort(e.Address)
		if _, perr := strconv.Atoi(port); err != nil || perr != nil || host == "" {
			if u, uerr := url.Parse(e.Address); uerr != nil || u.Scheme == "" || u.Host == "" {
				t.Errorf("endpoint %s %d/%s: address %q is neither host:port nor a URL with a scheme", e.Container, e.ContainerPort, e.Protocol, e.Address)
			}
			continue
		}
		if !s.h.DialEndpoints || (e.Protocol != "" && e.Protocol != workload.ProtocolTCP) {
			continue
		}
		poll.Eventually(t, fmt.Sprintf("endpoint %s %d/tcp at %s answers", e.Container, e.ContainerPort, e.Address), s.h.readyTimeout(), func() (bool, string) {
			c, err := s.h.dial(e.Address)
			if errors.Is(err, ErrUnreachable) {
				t.Logf("endpoint %s %d/tcp at %s is not dialled: %v", e.Container, e.ContainerPort, e.Address, err)
				return true, ""
			}
			if err != nil {
				return false, "nothing answers: " + err.Error()
			}
			_ = c.Close()
			return true, ""
		})
	}
}
