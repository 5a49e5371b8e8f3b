package events

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrURL: a subscription's URL is one landlord will not send to.
var ErrURL = errors.New("webhook URL refused")

// ErrForbiddenAddress: a webhook's host is, or resolved to, an address
// the operator has not allowed (see Guard).
var ErrForbiddenAddress = errors.New("address not allowed for webhooks")

// special are the ranges, beyond what netip.Addr classifies (loopback,
// private, link-local, multicast, unspecified), that are not the public
// internet (RFC 6890's special-purpose registries): shared address space,
// "this network", IETF protocol assignments, the documentation and
// benchmarking ranges, the reserved 240/4, NAT64 and 6to4 (which embed
// IPv4 addresses) and the IPv6 documentation prefix.
var special = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// Guard keeps webhooks off the networks behind landlord (server-side
// request forgery): a delivery connects only to public addresses, and to
// those of the networks the operator allows (events.allow_networks). The
// check is made on the address dialed, after name resolution, so that a
// name that resolves to a private address (or changes to one) is refused
// too; redirects are not followed and no proxy is used.
type Guard struct {
	allow []netip.Prefix
}

// NewGuard returns a guard that allows, beyond public addresses, those in
// allow.
func NewGuard(allow []netip.Prefix) *Guard { return &Guard{allow: allow} }

// CheckAddr returns an error wrapping ErrForbiddenAddress unless ip is
// public or allowed.
func (g *Guard) CheckAddr(ip netip.Addr) error {
	ip = ip.Unmap()
	for _, p := range g.allow {
		if p.Contains(ip) {
			return nil
		}
	}
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsUnspecified() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return fmt.Errorf("%w: %s is not a public address; an operator may allow its network with events.allow_networks", ErrForbiddenAddress, ip)
	}
	for _, p := range special {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is in %s, which is not the public internet; an operator may allow it with events.allow_networks", ErrForbiddenAddress, ip, p)
		}
	}
	return nil
}

// CheckURL reads a subscription's URL and returns it when landlord may
// send to it: https, or http to a loopback host; no credentials or
// fragment; a host whose literal address, when it is one, passes
// CheckAddr. Names are checked when a delivery dials them.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a URL", ErrURL, quote(raw))
	}
	if !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%w: %s is not an absolute http(s) URL", ErrURL, quote(raw))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: it holds credentials, which would show wherever the URL is shown; receivers authenticate deliveries by their signatures", ErrURL)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, fmt.Errorf("%w: a fragment is never sent; leave it out", ErrURL)
	}
	host := u.Hostname()
	addr, literal := parseHost(host)
	if isLocalhost(host) {
		// Names under localhost resolve to loopback (RFC 6761): checked
		// as its address, so that a URL no delivery could reach is
		// refused now, not after a day of failed attempts.
		addr, literal = netip.AddrFrom4([4]byte{127, 0, 0, 1}), true
	}
	if literal {
		if err := g.CheckAddr(addr); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrURL, err)
		}
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !literal || !addr.Unmap().IsLoopback() {
			return nil, fmt.Errorf("%w: http is for loopback receivers only; use https", ErrURL)
		}
	default:
		return nil, fmt.Errorf("%w: scheme %q; use https", ErrURL, u.Scheme)
	}
	return u, nil
}

// isLocalhost reports whether host is localhost or a name under it.
func isLocalhost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

func parseHost(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return a, err == nil
}

func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// Client returns the HTTP client deliveries are made with: each attempt
// limited to timeout, connections checked by the guard, no redirect
// followed (a 3xx is a failed attempt), no proxy.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{
		Timeout: timeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: cannot read %q", ErrForbiddenAddress, address)
			}
			return g.CheckAddr(ap.Addr())
		},
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
