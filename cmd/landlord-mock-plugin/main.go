// Command landlord-mock-plugin is landlord's mock compute provider served as
// a provider plugin, for trying plugins out and for tests: configure it in
// landlord's "plugins" block (docs/plugins.md). landlord starts it; it is
// never run by hand.
package main

import "github.com/jaxxstorm/landlord/internal/compute/providers/mock/mockplugin"

func main() { mockplugin.Serve() }
