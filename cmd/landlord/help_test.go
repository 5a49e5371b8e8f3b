package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// verbs calls f with every command of landlord's own, the root's verbs and
// the verbs under them; cobra's help and completion are cobra's.
func verbs(t *testing.T, f func(t *testing.T, cmd *cobra.Command)) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, c := range cmd.Commands() {
			if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
				continue
			}
			t.Run(c.CommandPath(), func(t *testing.T) { f(t, c) })
			walk(c)
		}
	}
	walk(newRootCommand())
}

// Every verb's help shows an example of it.
func TestEveryVerbHasAnExample(t *testing.T) {
	verbs(t, func(t *testing.T, cmd *cobra.Command) {
		if !strings.Contains("\n"+cmd.Example, "\n  "+cmd.CommandPath()) {
			t.Errorf("no example of %s:\n%s", cmd.CommandPath(), cmd.Example)
		}
	})
}

// A flag that a variable sets says so as "(env NAME" in its help, and the
// variable's name is the flag's, in capitals, after LANDLORD_: --ca-cert is
// LANDLORD_CA_CERT. The flags of the verbs that talk to a server all have
// variables.
func TestFlagVariablesFollowOneScheme(t *testing.T) {
	withEnv := map[string]bool{"addr": true, "token": true, "ca-cert": true, "client-cert": true, "client-key": true, "tls-server-name": true}
	anyVariable := regexp.MustCompile(`\bLANDLORD_[A-Z_]+`)
	verbs(t, func(t *testing.T, cmd *cobra.Command) {
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			want := "(env LANDLORD_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
			switch {
			case strings.Contains(f.Usage, want+")") || strings.Contains(f.Usage, want+";") || strings.Contains(f.Usage, want+","):
			case withEnv[f.Name] || anyVariable.MatchString(f.Usage):
				t.Errorf("--%s: %q does not say %s)", f.Name, f.Usage, want)
			}
		})
	})
}
