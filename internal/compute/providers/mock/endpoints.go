package mock

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Endpoints. The mock runs nothing, so by default it reports each port as
// mock://<tenant>/<container>:<port>, a name that says so and that no
// client can mistake for an address to dial. A tenant that asks for
// "listen" gets a real listener on 127.0.0.1 per port (its host_port when
// set, else a free one), kept across updates while the port stays, that
// answers with a line naming the workload (HTTP over TCP, a datagram over
// UDP); its address is what the mock reports.

// Scheme is the scheme of the endpoints of a tenant that does not listen.
const Scheme = "mock"

// endpointKey identifies one published port of a tenant.
type endpointKey struct {
	container string
	port      int
	protocol  workload.Protocol
	hostPort  int
}

// listener is a real socket serving one endpoint.
type listener struct {
	addr  string
	about atomic.Pointer[string] // the line it answers with
	close func()
}

// endpoints returns the endpoints of spec for the tenant, opening the
// listeners it asks for and keeping those it had; pl.mu is held. On error
// the listeners it opened are closed and the tenant's others are kept.
func (pl *Platform) endpoints(spec *provider.TenantComputeSpec) ([]provider.Endpoint, error) {
	listen := behaviourOf(spec).Listen
	had := pl.listeners[spec.TenantID]
	keep := map[endpointKey]*listener{}
	var opened []*listener
	var eps []provider.Endpoint
	for _, c := range spec.Containers {
		for _, port := range c.Ports {
			protocol := port.Protocol
			if protocol == "" {
				protocol = workload.ProtocolTCP
			}
			e := provider.Endpoint{Container: c.Name, Name: port.Name, ContainerPort: port.ContainerPort, Protocol: protocol}
			if !listen {
				e.Address = fmt.Sprintf("%s://%s/%s:%d", Scheme, tenantLabel(spec), c.Name, port.ContainerPort)
				eps = append(eps, e)
				continue
			}
			key := endpointKey{c.Name, port.ContainerPort, protocol, port.HostPort}
			l := had[key]
			if l == nil {
				var err error
				if l, err = openListener(protocol, port.HostPort); err != nil {
					for _, o := range opened {
						o.close()
					}
					return nil, fmt.Errorf("listen for port %d/%s of container %s: %w", port.ContainerPort, protocol, c.Name, err)
				}
				opened = append(opened, l)
			}
			about := fmt.Sprintf("mock workload of tenant %s: container %s (image %s), port %d/%s, generation %d\n",
				tenantLabel(spec), c.Name, c.Image, port.ContainerPort, protocol, spec.Generation)
			l.about.Store(&about)
			keep[key] = l
			e.Address = l.addr
			eps = append(eps, e)
		}
	}
	for key, l := range had {
		if keep[key] == nil {
			l.close()
		}
	}
	if len(keep) == 0 {
		delete(pl.listeners, spec.TenantID)
	} else {
		pl.listeners[spec.TenantID] = keep
	}
	return eps, nil
}

// closeListeners closes the tenant's listeners, those of one container
// when container is not empty; pl.mu is held.
func (pl *Platform) closeListeners(tenantID, container string) {
	for key, l := range pl.listeners[tenantID] {
		if container == "" || key.container == container {
			l.close()
			delete(pl.listeners[tenantID], key)
		}
	}
	if len(pl.listeners[tenantID]) == 0 {
		delete(pl.listeners, tenantID)
	}
}

// Close closes every listener of the platform's workloads, which stay
// recorded; tests call it when they end.
func (pl *Platform) Close() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for tenantID := range pl.listeners {
		pl.closeListeners(tenantID, "")
	}
}

// tenantLabel names the tenant in endpoints: its name, else its id.
func tenantLabel(spec *provider.TenantComputeSpec) string {
	if spec.TenantName != "" {
		return spec.TenantName
	}
	return spec.TenantID
}

// openListener listens on 127.0.0.1 (port 0 means a free one) and serves
// the listener's line until it is closed.
func openListener(protocol workload.Protocol, port int) (*listener, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	l := &listener{}
	empty := ""
	l.about.Store(&empty)
	if protocol == workload.ProtocolUDP {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, err
		}
		l.addr = pc.LocalAddr().String()
		go func() {
			buf := make([]byte, 64<<10)
			for {
				_, from, err := pc.ReadFrom(buf)
				if errors.Is(err, net.ErrClosed) {
					return
				}
				if err == nil {
					_, _ = pc.WriteTo([]byte(*l.about.Load()), from)
				}
			}
		}()
		l.close = func() { _ = pc.Close() }
		return l, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l.addr = ln.Addr().String()
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, *l.about.Load())
		}),
	}
	go func() { _ = srv.Serve(ln) }()
	l.close = func() { _ = srv.Close() }
	return l, nil
}
