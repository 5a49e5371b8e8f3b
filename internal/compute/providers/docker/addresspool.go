package docker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

// DefaultAddressPoolSize is AddressPool.Size's default: a /24 holds 253
// containers.
const DefaultAddressPoolSize = 24

// AddressPool is a range of IPv4 addresses the networks the provider creates
// take their subnets from, as the Engine's own default-address-pools entries
// in daemon.json ({"base": "10.213.0.0/16", "size": 24}) are.
//
// Without one, each network the provider creates takes one of the Engine's
// default address pools, which every program on the Engine shares: a stock
// Engine has about 30 (172.17.0.0/16 to 172.31.0.0/16, and 192.168.0.0/16
// in /20s), so about 30 tenants with networks of their own exhaust them, and
// then neither landlord nor anything else on the Engine can create a
// network. With one, each network gets the first subnet of Size bits in
// Base that no network on the Engine uses, and the Engine's pools are left
// alone.
type AddressPool struct {
	// Base is the range, an IPv4 prefix such as 10.213.0.0/16. It should
	// not be a range the host routes elsewhere (its LAN, a VPN): containers
	// on it could not reach that range.
	Base netip.Prefix `json:"base"`
	// Size is the prefix length of each network; default 24. In the
	// shared-network mode (network_name) every tenant's containers share
	// one network of this size.
	Size int `json:"size"`
}

// UnmarshalJSON reads {"base": "…", "size": n}, refusing other keys.
func (a *AddressPool) UnmarshalJSON(b []byte) error {
	type plain AddressPool
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v plain
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("must be an object {base: an IPv4 prefix such as 10.213.0.0/16, size: a prefix length such as 24}: %w", err)
	}
	*a = AddressPool(v)
	return nil
}

// check reports what is wrong with the pool, at pointers under at.
func (a *AddressPool) check(at string, add func(at, format string, args ...any)) {
	if !a.Base.IsValid() || !a.Base.Addr().Is4() {
		add(at+"/base", "%q is not an IPv4 prefix such as 10.213.0.0/16", a.Base)
		return
	}
	if a.Base != a.Base.Masked() {
		add(at+"/base", "%s has host bits set; the range is %s", a.Base, a.Base.Masked())
	}
	if a.Size < a.Base.Bits() || a.Size > 29 {
		add(at+"/size", "%d is not a prefix length from the base's %d to 29 (a /29 holds 5 containers)", a.Size, a.Base.Bits())
	}
}

// errPoolTaken is the Engine refusing a subnet another network took since
// it was listed.
var errPoolTaken = errors.New("the subnet was taken meanwhile")

// pickSubnet picks the subnet of a network about to be created, of the
// address pool (which must be set): the first that overlaps none of the
// networks all (every network on the Engine) nor refused (subnets the
// Engine refused, which other processes are taking). After a refusal it
// picks at random among the next few free ones, so that processes
// creating networks at once do not keep choosing the same.
func (p *Provider) pickSubnet(all []network.Summary, refused []netip.Prefix) (netip.Prefix, error) {
	pool := p.settings.AddressPool
	used := slices.Clone(refused)
	for _, n := range all {
		for _, c := range n.IPAM.Config {
			if c.Subnet.IsValid() && c.Subnet.Addr().Is4() {
				used = append(used, c.Subnet)
			}
		}
	}
	skip := 0
	if len(refused) > 0 {
		skip = rand.IntN(4)
	}
	var pick netip.Prefix
	for i := 0; i <= skip; i++ {
		s, found := freeSubnet(pool.Base, pool.Size, used)
		switch {
		case !found && i == 0:
			// Networks that are removed free their subnets: retryable.
			return netip.Prefix{}, fmt.Errorf("address_pool %s has no /%d left that no network on the Engine uses (%d networks with IPv4 subnets); remove unused networks (docker network prune) or widen address_pool.base", pool.Base, pool.Size, len(used))
		case !found:
			return pick, nil
		}
		pick = s
		used = append(used, s)
	}
	return pick, nil
}

// freeSubnet is the first subnet of size bits in base that overlaps none
// of used.
func freeSubnet(base netip.Prefix, size int, used []netip.Prefix) (netip.Prefix, bool) {
	if size < base.Bits() || size > 32 {
		return netip.Prefix{}, false
	}
	step := uint64(1) << (32 - size)
	start := uint64(ipv4Uint(base.Masked().Addr()))
	end := start + uint64(1)<<(32-base.Bits())
	for at := start; at < end; at += step {
		candidate := netip.PrefixFrom(uint32Addr(uint32(at)), size)
		free := true
		for _, u := range used {
			if u.Overlaps(candidate) {
				free = false
				break
			}
		}
		if free {
			return candidate, true
		}
	}
	return netip.Prefix{}, false
}

func ipv4Uint(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func uint32Addr(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// withSubnet sets opts' IPAM to subnet.
func withSubnet(opts *client.NetworkCreateOptions, subnet netip.Prefix) {
	opts.IPAM = &network.IPAM{Driver: "default", Config: []network.IPAMConfig{{Subnet: subnet}}}
}

// isPoolOverlap reports whether the Engine refused a network's subnet as
// overlapping another network's ("Pool overlaps with other one on this
// address space", libnetwork's ipam).
func isPoolOverlap(err error) bool {
	return err != nil && strings.Contains(err.Error(), "overlaps with")
}

// poolError words an Engine with no free default pool for the network: the
// address_pool setting avoids it.
func poolError(name string, err error) error {
	return fmt.Errorf("create network %s: the Engine has no free address pool for another network (each network takes one; a stock Engine has about 30, shared with every program on it): set address_pool in the docker block to give landlord's networks a range of their own, use one network for every tenant (network_name), remove unused networks (docker network prune), or give the Engine more (default-address-pools in daemon.json): %w", name, err)
}
