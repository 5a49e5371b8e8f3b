// Command landlord-provider-process is the process compute provider served
// as a landlord provider plugin: configure it in landlord's plugins block
// (docs/plugins.md). landlord starts it; it is never run by hand.
package main

import (
	"context"

	"github.com/jaxxstorm/landlord/examples/process-provider/process"
	"github.com/jaxxstorm/landlord/sdk/plugin"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

func main() {
	plugin.Serve(func(_ context.Context, c plugin.Config) (provider.Provider, error) {
		return process.New(process.Options{Block: c.Settings, HashKey: c.HashKey, Logger: c.Logger})
	})
}
