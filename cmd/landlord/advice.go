package main

import (
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/api"
)

// advise rewords an API problem in err for someone at the CLI: where the
// server's words give HTTP advice (an endpoint, a header, a query
// parameter), the CLI's name its flags and commands. cmd is the command
// that ran. Only the words change: the error still wraps the same chain,
// so its exit code and what callers test stay.
func advise(cmd *cobra.Command, err error) error {
	var ce *client.Error
	if cmd == nil || !errors.As(err, &ce) {
		return err
	}
	worded := cliProblem(cmd, *ce)
	if worded.Error() == ce.Error() {
		return err
	}
	return &advisedError{msg: strings.Replace(err.Error(), ce.Error(), worded.Error(), 1), err: err}
}

// advisedError is err with other words.
type advisedError struct {
	msg string
	err error
}

func (e *advisedError) Error() string { return e.msg }
func (e *advisedError) Unwrap() error { return e.err }

// cliProblem is e in the CLI's words, by the problem's code.
func cliProblem(cmd *cobra.Command, e client.Error) *client.Error {
	p := &e.Problem
	switch p.Code {
	case api.CodeTenantNotFound:
		p.Detail = "no such tenant; see the tenants with: landlord list (deleted ones too: landlord list --include-deleted)"
	case api.CodeUnauthorized:
		if tokenGiven(cmd) {
			p.Detail = "the server does not accept the API token given (--token or LANDLORD_TOKEN); use one from its configuration"
		} else {
			p.Detail = "the server needs an API token: pass --token or set LANDLORD_TOKEN to one from its configuration"
		}
	case api.CodeForbidden:
		p.Detail += "; this needs an admin token (--token or LANDLORD_TOKEN)"
	case api.CodePreconditionFailed:
		p.Detail = "the tenant changed while landlord " + cmd.Name() + " worked on it; look at it again (landlord get), then run the command again"
	case api.CodeProviderNotFound:
		if cmd.Name() == "set" && len(cmd.Flags().Args()) > 0 {
			// A tenant stranded by a switch of provider.
			p.Detail += "; or remove its record, destroying nothing: landlord delete " + cmd.Flags().Arg(0) + " --forget"
		}
	case api.CodeStorageUnavailable:
		p.Detail = "the server's database cannot take this request now (its disk is full, or it cannot be reached); nothing was written: try again in a few seconds"
	}
	// A query parameter at fault is a flag of the command: page_token is
	// --page-token.
	errs := make([]client.FieldError, len(p.Errors))
	for i, f := range p.Errors {
		if flag := strings.ReplaceAll(f.Parameter, "_", "-"); f.Parameter != "" && cmd.Flags().Lookup(flag) != nil {
			f.Pointer, f.Parameter = "--"+flag, ""
		}
		errs[i] = f
	}
	p.Errors = errs
	return &e
}

// tokenGiven reports whether the command sent a token: --token, else
// LANDLORD_TOKEN.
func tokenGiven(cmd *cobra.Command) bool {
	if f := cmd.Flags().Lookup("token"); f != nil && f.Changed {
		return f.Value.String() != ""
	}
	return os.Getenv("LANDLORD_TOKEN") != ""
}
