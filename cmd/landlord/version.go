package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is landlord's version, set when building a release:
//
//	go build -ldflags "-X main.version=v1.2.3" ./cmd/landlord
//
// Empty means the module version from the build information.
var version = ""

func init() { commands = append(commands, newVersionCommand) }

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:               "version",
		Short:             "Print landlord's version",
		Example:           "  landlord version",
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), buildVersion())
			return err
		},
	}
}

// buildVersion is this binary's versionString.
func buildVersion() string {
	info, _ := debug.ReadBuildInfo()
	return versionString(version, info)
}

// versionString is "landlord VERSION (commit REV, GO)": the version set at
// build time, else the module's, with the VCS revision when known.
func versionString(v string, info *debug.BuildInfo) string {
	var rev, modified string
	if info != nil {
		if v == "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	out := "landlord " + v + " ("
	if rev != "" {
		out += "commit " + rev[:min(len(rev), 12)] + modified + ", "
	}
	return out + runtime.Version() + ")"
}
