// Command landlord is the tenant provisioning control plane: `landlord
// serve` runs the API and the controller; the other verbs are the CLI,
// which talks to a server through the Go client.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK       = 0
	exitError    = 1 // an API or validation error
	exitUsage    = 2
	exitNotFound = 3
	exitTimeout  = 4
)

// exitError carries an exit code for main.
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
		Use:           "landlord",
		Short:         "landlord provisions and keeps a dedicated deployment per tenant",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, c := range commands {
		root.AddCommand(c())
	}
	return root
}

func main() {
	err := newRootCommand().Execute()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "landlord:", err)
	var coded *exitCodeError
	if errors.As(err, &coded) {
		os.Exit(coded.code)
	}
	if isUsageError(err) {
		os.Exit(exitUsage)
	}
	os.Exit(exitError)
}

// isUsageError reports cobra's errors about flags and arguments.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand", "invalid argument", "accepts ", "requires ", "flag needs", "required flag"} {
		if len(msg) >= len(prefix) && msg[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
