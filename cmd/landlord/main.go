// Command landlord is the tenant provisioning control plane: `landlord
// serve` runs the API and the controller; the other verbs are the CLI,
// which talks to a server through the Go client.
package main

import (
	"errors"
	"fmt"
	"os"

	// Maintenance windows name IANA time zones; images built FROM scratch
	// have no zoneinfo of their own.
	_ "time/tzdata"

	// Likewise CA roots, for AWS, OIDC issuers and webhooks: used only
	// where the system has none.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/spf13/cobra"
)

// Exit codes. Each is described in the root command's help and in the
// README, and TestExitCodesDocumented holds both to this list.
const (
	exitOK       = 0
	exitFailure  = 1 // any other error: refused, unanswered, failed
	exitUsage    = 2
	exitNotFound = 3
	exitTimeout  = 4
)

// exitCodesHelp describes the exit codes in the root command's help.
const exitCodesHelp = `Exit codes:
  0  success
  1  any other error: the server refused the request or did not answer, a
     tenant ended failed under --wait, a rollout ended aborted or halted
     under --watch, serve could not open its database or address, secrets
     rotate could not rotate every tenant
  2  a usage error: an unknown verb or flag, a bad flag value or argument, a
     configuration that serve or secrets refuses
  3  not found: the API answered 404 (no such tenant, plan, rollout,
     subscription or delivery)
  4  --wait or --watch ran out of --timeout: the change stands, and landlord
     carries on with it`

// exitCodeError is an error with the exit code main ends with.
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string { return e.err.Error() }
func (e *exitCodeError) Unwrap() error { return e.err }

// withExitCode marks err to end the process with code.
func withExitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitCodeError{code: code, err: err}
}

// commands are the verbs; each verb's file adds its constructor.
var commands []func() *cobra.Command

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "landlord",
		Short: "landlord provisions and keeps a dedicated deployment per tenant",
		Long: `landlord provisions and keeps a dedicated deployment per tenant: landlord
serve runs the API and the controller, and the other verbs talk to it
(--addr or LANDLORD_ADDR, default http://127.0.0.1:8080; --token or
LANDLORD_TOKEN; for an https:// server, --ca-cert, --client-cert,
--client-key and --tls-server-name, or LANDLORD_CA_CERT,
LANDLORD_CLIENT_CERT, LANDLORD_CLIENT_KEY and LANDLORD_TLS_SERVER_NAME).

A flag's environment variable is named after it: LANDLORD_, then the flag's
name in capitals with _ for - (--ca-cert: LANDLORD_CA_CERT). A flag given
wins over its variable. LANDLORD_CACERT, the former name of
LANDLORD_CA_CERT, is still read when LANDLORD_CA_CERT is not set.

Tables shown on a terminal cut long messages and descriptions, ending them
in …, so that each row stays on one line; written to a file or a pipe,
nothing is cut. -o json and -o yaml never cut anything.

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, c := range commands {
		root.AddCommand(c())
	}
	return root
}

func main() {
	err := execute(newRootCommand())
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "landlord:", err)
	os.Exit(exitCode(err))
}

// exitCode is the code the process ends with after err: the one err
// carries, else 1.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var coded *exitCodeError
	if errors.As(err, &coded) {
		return coded.code
	}
	return exitFailure
}

// execute runs root as main does. Cobra's errors about verbs, flags and
// arguments carry exitUsage from where they are made, so that none is told
// apart by its words.
func execute(root *cobra.Command) error {
	// Cobra adds its help and completion verbs when it runs; added first,
	// they are typed too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	// Every command's flag errors go through the root's function.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(exitUsage, err) })
	// The root keeps its nil Args: with them cobra refuses an unknown verb
	// before it calls any command.
	for _, c := range root.Commands() {
		typeArgErrors(c)
	}
	cmd, err := root.ExecuteC()
	if err != nil && (cmd == nil || cmd.CalledAs() == "") {
		// No command was called: the error is cobra's, about the verb.
		return withExitCode(exitUsage, err)
	}
	return advise(cmd, err)
}

// typeArgErrors makes the errors of the Args validator of cmd and of the
// commands under it carry exitUsage. Cobra checks required flags and flag
// groups after Args, with errors of no type; checking them at the end of
// Args types them.
func typeArgErrors(cmd *cobra.Command) {
	args := cmd.Args
	if args == nil {
		args = cobra.ArbitraryArgs
	}
	cmd.Args = func(cmd *cobra.Command, a []string) error {
		if err := args(cmd, a); err != nil {
			return withExitCode(exitUsage, err)
		}
		if err := cmd.ValidateRequiredFlags(); err != nil {
			return withExitCode(exitUsage, err)
		}
		if err := cmd.ValidateFlagGroups(); err != nil {
			return withExitCode(exitUsage, err)
		}
		return nil
	}
	for _, c := range cmd.Commands() {
		typeArgErrors(c)
	}
}
