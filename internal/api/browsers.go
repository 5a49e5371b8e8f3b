package api

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// A browser visiting another site is a client of landlord too, if that
// site makes it one: a form on any page can POST to
// http://127.0.0.1:8080/v1/rollouts/{id}/abort, and a page whose name its
// owner re-points at 127.0.0.1 (DNS rebinding) reads and writes as if it
// were landlord's own. A server without credentials, on loopback, answers
// whoever reaches it; these checks keep browsers on other sites from being
// whoever.

// crossSiteRefused is the detail of a write a browser sent from another
// site.
const crossSiteRefused = "a browser sent this request from another site (Sec-Fetch-Site or Origin says so): landlord refuses writes from pages that are not its own"

// refuseCrossSite refuses a write (anything but GET, HEAD and OPTIONS) that
// a browser sent from another site, with a 403. The rule is net/http's
// CrossOriginProtection, which the web console applies to its forms too:
// Sec-Fetch-Site, sent by every browser since 2023, else the Origin's host
// compared with Host. Clients other than browsers send neither and are not
// affected. It is applied whatever the credentials, since a client
// certificate is sent by a browser to any page's form as a cookie is.
func (s *Server) refuseCrossSite(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeProblem(w, r, problem(http.StatusForbidden, wire.CodeForbidden, crossSiteRefused))
	}))
	return p.Handler(next)
}

// refuseForeignHosts refuses, with a 403, a request of a server without
// credentials that reached it on a loopback address with a Host header
// other than localhost, a loopback address or one of Options.Hosts: a
// browser sends its page's own name as Host, so a page that re-pointed its
// name at 127.0.0.1 is refused. Requests that reach a server on another
// address (with --insecure) are not checked: a client may name that
// address as it likes. The API's own calls in the process (the web
// console's), which came from no network peer, are not checked either.
func (s *Server) refuseForeignHosts(next http.Handler) http.Handler {
	if s.auth.authenticates() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RemoteAddr != "" && onLoopback(r.Context()) && !s.knownHost(r.Host) {
			s.writeProblem(w, r, problem(http.StatusForbidden, wire.CodeForbidden,
				"this landlord has no credentials and serves loopback only, so it answers requests addressed to localhost or a loopback address, "+
					"not to "+wire.Quote(r.Host)+": a web page may have pointed its name at this machine (DNS rebinding). Address it as localhost or 127.0.0.1"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// onLoopback reports whether the request arrived on a loopback address of
// this host (http.Server records it in the request's context).
func onLoopback(ctx context.Context) bool {
	addr, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// knownHost reports whether a Host header names this machine's loopback
// (localhost, 127.0.0.0/8, [::1], on any port) or one of Options.Hosts. A
// request without Host (HTTP/1.0) names nothing and passes.
func (s *Server) knownHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "" || strings.EqualFold(host, "localhost") {
		return true
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.Unmap().IsLoopback()
	}
	for _, h := range s.opts.Hosts {
		if strings.EqualFold(host, strings.TrimSuffix(h, ".")) {
			return true
		}
	}
	return false
}
