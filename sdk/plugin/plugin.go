// Package plugin serves a landlord compute provider as a separate program,
// a plugin, and starts such a program as a provider. It is the SDK's side
// of HashiCorp's go-plugin, as Terraform providers and Nomad task drivers
// use it: landlord starts the plugin's binary (checked against its SHA-256),
// the two shake hands (a magic cookie, the protocol version), talk gRPC over
// a local socket with mutual TLS set up for the one connection (AutoMTLS),
// and landlord restarts the plugin, with backoff, when it dies.
//
// A plugin's main is one call:
//
//	func main() {
//		plugin.Serve(func(ctx context.Context, c plugin.Config) (provider.Provider, error) {
//			return myprovider.New(c.Settings, c.HashKey, c.Logger)
//		})
//	}
//
// The provider it returns is any provider.Provider, with any of the
// optional interfaces; landlord sees exactly the same contract as from a
// provider compiled into it, and package providertest checks it across the
// boundary (Start a plugin and hand the result to providertest.Run).
//
// # Protocol versions
//
// The protocol (pluginpb/provider.proto) is versioned as a whole;
// ProtocolVersion is the one this SDK speaks and the handshake settles on a
// version both sides speak. Within a version, messages and calls are only
// added. landlord keeps speaking a protocol version for at least one major
// release of the module after it introduces the next; a plugin built with
// an older SDK keeps working until then, and one built with a newer SDK
// than landlord knows is refused at the handshake with both versions named.
package plugin

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/jaxxstorm/landlord/sdk/plugin/pluginpb"
)

// ProtocolVersion is the version of the plugin protocol this SDK speaks.
const ProtocolVersion = 1

// handshake is what landlord and a plugin check of each other before
// anything else: the cookie tells a binary run by hand that it is a plugin
// (it then says so and exits), and the protocol version is negotiated.
var handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "LANDLORD_PROVIDER_PLUGIN",
	MagicCookieValue: "8f6c1d6e-landlord-compute-provider",
}

// pluginKey is the name of the one plugin a landlord plugin binary serves.
const pluginKey = "provider"

// grpcPlugin is the go-plugin plumbing of both sides: the plugin registers
// its server, landlord gets a client.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	server *server
}

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterProviderServer(s, p.server)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginpb.NewProviderClient(c), nil
}

func pluginSets(s *server) map[int]goplugin.PluginSet {
	return map[int]goplugin.PluginSet{ProtocolVersion: {pluginKey: &grpcPlugin{server: s}}}
}
