package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/internal/build"
)

func init() { commands = append(commands, newVersionCommand) }

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print landlord's version, commit, build date and Go version",
		Long: `Print which landlord this is: its version, the commit and date it was built
from, and the Go release and platform that built it. A release sets the
version with the linker (see docs/operations.md); a build from a Git work tree
says (devel), with the commit and whether the tree had changes.`,
		Example:           "  landlord version\n  landlord version -o json",
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			info := build.Read()
			switch output {
			case "text":
				_, err := fmt.Fprintln(cmd.OutOrStdout(), info)
				return err
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			return withExitCode(exitUsage, fmt.Errorf("-o %q: use text or json", output))
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
