package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newComputeCommand) }

func newComputeCommand() *cobra.Command {
	var provider string
	cmd := &cobra.Command{
		Use:   "compute",
		Short: "Show what a compute provider accepts in a tenant's config",
		Long: `Show a compute provider's compute_config fields and the operator's defaults,
which are merged under each tenant's config. -o json gives the whole JSON Schema.`,
		Example: `  landlord compute
  landlord compute --provider docker -o json | jq .schema
  landlord compute providers`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	cmd.Flags().StringVar(&provider, "provider", "", "the provider (default the server's default provider)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		cfg, err := c.Compute().Config(contextOf(cmd), provider)
		if err != nil {
			return exitFor(fmt.Errorf("compute config: %w", err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, cfg)
		}
		return renderComputeConfig(cmd.OutOrStdout(), *cfg)
	}
	cmd.AddCommand(newComputeProvidersCommand())
	return cmd
}
