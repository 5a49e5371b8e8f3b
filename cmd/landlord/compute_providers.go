package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newComputeProvidersCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "providers",
		Short: "List the enabled compute providers",
		Long:  "List the server's enabled compute providers, which is the default, and whether each is healthy.",
		Example: `  landlord compute providers
  landlord compute providers -o json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		list, err := c.Compute().Providers(contextOf(cmd))
		if err != nil {
			return exitFor(fmt.Errorf("compute providers: %w", err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, list)
		}
		return renderProviders(cmd.OutOrStdout(), list.Providers)
	}
	return cmd
}
