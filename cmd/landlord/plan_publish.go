package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func newPlanPublishCommand() *cobra.Command {
	var (
		config string
		req    client.PublishVersionRequest
	)
	cmd := &cobra.Command{
		Use:   "publish NAME --config VALUE [--message M]",
		Short: "Publish a plan's next version",
		Long: `Publish a plan's next version: a compute_config fragment, checked against
the plan provider's schema (the fields it requires may be left to each
tenant's own config). Versions never change once published.

Publishing moves no tenant: the plan's first version becomes its current
one, the version new tenants get; a later one reaches tenants through a
rollout (landlord rollout plan NAME, then landlord rollout start NAME).

--config is inline JSON or YAML, @path or file://path (a JSON or YAML
file), or - to read standard input.`,
		Example: `  landlord plan publish standard --config 'image: nginx:1.27' --message 'nginx 1.27'
  landlord plan publish standard --config @standard.yaml`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = firstArg(completePlanNames(cf))
	fs := cmd.Flags()
	fs.StringVar(&config, "config", "", "the version's config: inline JSON or YAML, @path, file://path or - (stdin)")
	fs.StringVar(&req.Message, "message", "", "what changed in this version")
	_ = cmd.MarkFlagRequired("config")
	_ = cmd.MarkFlagFilename("config", "json", "yaml", "yml")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		var err error
		if req.Config, err = readConfig(config, cmd.InOrStdin()); err != nil {
			return withExitCode(exitFailure, err)
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		name := args[0]
		v, err := c.Plans().Publish(contextOf(cmd), name, req, client.PublishOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("publish plan %s: %w", name, err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, v)
		}
		if err := renderVersion(cmd.OutOrStdout(), *v, now()); err != nil {
			return err
		}
		if v.Version == 1 {
			fmt.Fprintf(cmd.ErrOrStderr(), "version 1 is the plan's current version: new tenants of plan %s get it\n", name)
		} else {
			fmt.Fprintf(cmd.ErrOrStderr(), "no tenant moved: see what a rollout to version %d would do with: landlord rollout plan %s --to %d\n", v.Version, name, v.Version)
		}
		return nil
	}
	return cmd
}
