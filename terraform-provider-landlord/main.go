// Command terraform-provider-landlord is landlord's Terraform (and
// OpenTofu) provider: tenants, plans and plan versions as resources, read
// and written through landlord's HTTP API with its public Go client.
//
// Terraform starts it; run by hand with -debug, it serves a debuggable
// provider and prints the TF_REATTACH_PROVIDERS value to give Terraform.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/jaxxstorm/landlord/terraform-provider-landlord/internal/provider"
)

// version is set by the release build (-ldflags "-X main.version=…").
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "serve for a debugger: print TF_REATTACH_PROVIDERS instead of waiting for Terraform to start the provider")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
