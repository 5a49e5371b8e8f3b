package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// advise rewords an API problem in err for someone at the CLI: where the
// server's words give HTTP advice (an endpoint, a header, a query
// parameter), the CLI's name its flags and commands. cmd is the command
// that ran. Only the words change: the error still wraps the same chain,
// so its exit code and what callers test stay. A TLS failure gets a line
// of advice naming the flag that fixes it (see tlsAdvice).
func advise(cmd *cobra.Command, err error) error {
	if cmd == nil || err == nil {
		return err
	}
	if hint := tlsAdvice(cmd, err); hint != "" {
		return &advisedError{msg: err.Error() + "\n  " + hint, err: err}
	}
	var ce *client.Error
	if !errors.As(err, &ce) {
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
	case client.CodeTenantNotFound:
		p.Detail = "no such tenant; see the tenants with: landlord list (deleted ones too: landlord list --include-deleted)"
	case client.CodeUnauthorized:
		switch token := givenToken(cmd); {
		case strings.Count(token, ".") == 2:
			// An identity provider's token: the server says what is
			// wrong with it (expired, another audience).
			p.Detail += "; get a new token from your identity provider and pass it with --token or LANDLORD_TOKEN"
		case token != "":
			p.Detail = "the server does not accept the API token given (--token or LANDLORD_TOKEN); use one from its configuration"
		default:
			p.Detail = "the server needs an API token: pass --token or set LANDLORD_TOKEN to one from its configuration"
		}
	case client.CodeForbidden:
		if strings.Contains(p.Detail, "may only read") {
			p.Detail += "; this needs an admin token (--token or LANDLORD_TOKEN)"
		}
	case client.CodePreconditionFailed:
		p.Detail = "the tenant changed while landlord " + cmd.Name() + " worked on it; look at it again (landlord get), then run the command again"
	case client.CodeProviderNotFound:
		if cmd.Name() == "set" && len(cmd.Flags().Args()) > 0 {
			// A tenant stranded by a switch of provider.
			p.Detail += "; or remove its record, destroying nothing: landlord delete " + cmd.Flags().Arg(0) + " --forget"
		}
	case client.CodeTenantDeleting:
		if cmd.Name() == "retry" && len(cmd.Flags().Args()) > 0 {
			// A failed deletion is tried again by asking for it again.
			p.Detail = "its deletion was asked for, and it cannot be changed; landlord delete " + cmd.Flags().Arg(0) + " tries a deletion that failed again"
		}
	case client.CodeRolloutNotFound:
		// A rollout verb's argument may be a plan's name (rolloutID).
		if arg := cmd.Flags().Arg(0); strings.HasPrefix(cmd.CommandPath(), "landlord rollout ") && arg != "" && !client.IsID(arg) {
			p.Detail = rolloutNotFound(arg)
		}
	case client.CodeNameTaken:
		if cmd.CommandPath() == "landlord subscriptions create" && len(cmd.Flags().Args()) > 0 {
			p.Detail += "; see it with: landlord subscriptions get " + cmd.Flags().Arg(0)
		}
	case client.CodeStorageUnavailable:
		p.Detail = "the server's database cannot take this request now (its disk is full, or it cannot be reached); nothing was written: try again in a few seconds"
	}
	p.Detail = cliWords(p.Detail)
	// A query parameter at fault is a flag of the command: page_token is
	// --page-token; so is a member of the body that a flag sets.
	errs := make([]client.FieldError, len(p.Errors))
	for i, f := range p.Errors {
		if flag := strings.ReplaceAll(f.Parameter, "_", "-"); f.Parameter != "" && cmd.Flags().Lookup(flag) != nil {
			f.Pointer, f.Parameter = "--"+flag, ""
		}
		f.Pointer = pointerFlag(cmd, f.Pointer)
		f.Message = cliWords(f.Message)
		errs[i] = f
	}
	p.Errors = errs
	return &e
}

// memberFlags are the members of request bodies that flags set, each to its
// flag. A config's members keep their JSON pointers: they are the config's
// own.
var memberFlags = map[string]string{
	"plan": "plan", "maintenance_window": "maintenance-window", "placements": "placement",
	"to_version": "to", "to_plan": "to-plan", "from_version": "from", "bake": "bake", "deadline": "deadline", "max_failures": "max-failures", "waves": "wave",
}

// subscriptionMemberFlags are the members of a subscription's requests,
// each to the flag of the subscriptions verbs that sets it: /types/1 is
// "--type 1", /labels/tier "--label tier".
var subscriptionMemberFlags = map[string]string{
	"url": "url", "types": "type", "labels": "label", "description": "description", "secret": "secret",
	"previous_expires_in": "previous-expires-in", "event_id": "event", "since": "since", "until": "until",
}

// pointerFlag is a JSON pointer into the body as the flag of cmd that set
// it: /plan/version is "--plan version", /waves/1/count is
// `--wave "percent=30,count=2" count`, naming the value of the second
// --wave, and /placements/1/compute_config/image is "--placement worker
// compute_config/image", naming the placement of the second --placement.
// A pointer that no flag of cmd set stays.
func pointerFlag(cmd *cobra.Command, pointer string) string {
	tokens := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	members := memberFlags
	if strings.HasPrefix(cmd.CommandPath(), "landlord subscriptions ") {
		members = subscriptionMemberFlags
	}
	flag, ok := members[tokens[0]]
	if !strings.HasPrefix(pointer, "/") || !ok || cmd.Flags().Lookup(flag) == nil {
		return pointer
	}
	out, rest := "--"+flag, tokens[1:]
	if flag == "wave" && len(rest) > 0 {
		waves, _ := cmd.Flags().GetStringArray("wave")
		if i, err := strconv.Atoi(rest[0]); err == nil && i >= 0 && i < len(waves) {
			out, rest = fmt.Sprintf("--wave %q", waves[i]), rest[1:]
		}
	}
	if flag == "placement" && len(rest) > 0 {
		if i, err := strconv.Atoi(rest[0]); err == nil {
			if name := placementNameOf(cmd, i); name != "" {
				out, rest = "--placement "+name, rest[1:]
			}
		}
	}
	if len(rest) > 0 {
		out += " " + strings.Join(rest, "/")
	}
	return out
}

// httpAdvice are the API's words for requests, each with the command that
// makes it, in the order they are replaced.
var httpAdvice = []struct {
	re  *regexp.Regexp
	cli string
}{
	{regexp.MustCompile(`POST /v1/rollouts/([^/\s)]+)/abort`), "landlord rollout abort $1"},
	{regexp.MustCompile(`POST /v1/plans/([^/\s)]+)/versions`), "landlord plan publish $1 --config VALUE"},
	{regexp.MustCompile(`GET /v1/tenants\?plan=([^\s;)]+)`), "landlord list --plan $1"},
	{regexp.MustCompile(`PATCH \{"plan": null\}`), "landlord set TENANT --plan ''"},
	{regexp.MustCompile(`GET /v1/plans/\{plan\}/versions`), "landlord plan versions PLAN"},
	{regexp.MustCompile(`GET /v1/plans\b`), "landlord plan list"},
	{regexp.MustCompile(`POST /v1/plans\b`), "landlord plan create NAME"},
	{regexp.MustCompile(`GET /v1/rollouts\b`), "landlord rollout list"},
	{regexp.MustCompile(`GET /v1/subscriptions\b`), "landlord subscriptions list"},
}

// cliWords is s with the requests it advises worded as the CLI's commands.
func cliWords(s string) string {
	if !strings.Contains(s, "/v1/") {
		return s
	}
	for _, a := range httpAdvice {
		s = a.re.ReplaceAllString(s, a.cli)
	}
	return s
}

// givenToken is the API token the command sent: --token, else
// LANDLORD_TOKEN.
func givenToken(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("token"); f != nil && f.Changed {
		return f.Value.String()
	}
	return os.Getenv("LANDLORD_TOKEN")
}
