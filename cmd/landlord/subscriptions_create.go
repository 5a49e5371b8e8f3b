package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// subscriptionFilterHelp says what a subscription's filters choose.
const subscriptionFilterHelp = `--type chooses the event types delivered (repeatable, or comma-separated;
landlord events --help and docs/events.md list them); none delivers every
type. --label key=value chooses the tenants whose events are delivered
(repeatable; a tenant must have every one); events of rollouts and plans,
which have no labels, are then not delivered.`

func newSubscriptionCreateCommand() *cobra.Command {
	var (
		req      client.CreateSubscriptionRequest
		types    []string
		labels   []string
		secret   string
		disabled bool
	)
	cmd := &cobra.Command{
		Use:   "create NAME --url URL [--type TYPE...] [--label KEY=VALUE...] [--description D] [--secret whsec_...]",
		Short: "Subscribe a webhook to events",
		Long: `Subscribe a URL to landlord's events: landlord posts each event written from
now on that the subscription chooses, signed with its secret.

` + subscriptionFilterHelp + `

Without --secret, landlord makes a secret and prints it: that is the only time
it is shown. Give it to the receiver, which verifies each delivery's
webhook-signature with it. --secret gives one of your own instead: whsec_
and the base64 of 24 to 64 random bytes; --secret - reads it from standard
input, keeping it out of the shell's history.`,
		Example: `  landlord subscriptions create billing --url https://billing.example.com/hooks --type landlord.tenant.ready,landlord.tenant.deleted
  landlord subscriptions create gold --url https://ops.example.com/landlord --label tier=gold --description 'gold tenants to ops'
  vault read -field=secret kv/landlord-hooks | landlord subscriptions create audit --url https://audit.example.com/in --secret -`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&req.URL, "url", "", "the https URL deliveries are posted to (http only to this host)")
	fs.StringArrayVar(&types, "type", nil, "deliver events of this type (repeatable, or comma-separated; default every type)")
	fs.StringArrayVar(&labels, "label", nil, "deliver the events of tenants with this label key=value (repeatable; all must match)")
	fs.StringVar(&req.Description, "description", "", "what the subscription is for")
	fs.StringVar(&secret, "secret", "", "the signing secret, whsec_ and base64; - reads it from standard input (default a new one, printed once; never shown)")
	fs.BoolVar(&disabled, "disabled", false, "create it disabled; landlord subscriptions enable NAME starts deliveries")
	_ = cmd.MarkFlagRequired("url")
	_ = cmd.RegisterFlagCompletionFunc("type", completeEventTypes)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		var err error
		if req.Types, err = eventTypeFlags(types); err != nil {
			return err
		}
		if req.Labels, err = selectorFlags(labels); err != nil {
			return err
		}
		given, err := secretFlag(cmd, secret)
		if err != nil {
			return err
		}
		req.Name, req.Secret = args[0], given
		if given == "" {
			req.Secret = client.NewSecret()
		}
		if disabled {
			req.Enabled = new(bool)
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		s, err := c.Subscriptions().Create(contextOf(cmd), req)
		if err != nil {
			return exitFor(fmt.Errorf("create subscription %s: %w", req.Name, err))
		}
		if given != "" {
			return printSubscription(cmd, cf.output, *s)
		}
		return printWithSecret(cmd, cf.output, *s, req.Secret)
	}
	return cmd
}

func newSubscriptionUpdateCommand() *cobra.Command {
	var (
		req    client.UpdateSubscriptionRequest
		url    string
		types  []string
		labels []string
		desc   string
	)
	cmd := &cobra.Command{
		Use:   "update NAME [--url URL] [--type TYPE...] [--label KEY=VALUE...] [--description D]",
		Short: "Change a webhook subscription's URL, filters or description",
		Long: `Change a webhook subscription: what a flag does not name stays. --type and
--label replace the subscription's types and labels; --type '' delivers
every type again, --label '' every tenant's events. Enable or disable it with
landlord subscriptions enable and disable, and change its secret with
landlord subscriptions rotate.

` + subscriptionFilterHelp,
		Example: `  landlord subscriptions update billing --url https://billing.example.com/v2/hooks
  landlord subscriptions update billing --type landlord.tenant.ready --type landlord.tenant.failed
  landlord subscriptions update gold --label ''`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&url, "url", "", "the https URL deliveries are posted to (http only to this host)")
	fs.StringArrayVar(&types, "type", nil, "deliver events of this type (repeatable, or comma-separated; replaces the types; '' for every type)")
	fs.StringArrayVar(&labels, "label", nil, "deliver the events of tenants with this label key=value (repeatable; replaces the labels; '' for every tenant)")
	fs.StringVar(&desc, "description", "", "what the subscription is for")
	cmd.ValidArgsFunction = completeSubscriptionNames(cf)
	_ = cmd.RegisterFlagCompletionFunc("type", completeEventTypes)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		fs := cmd.Flags()
		if !slices.ContainsFunc([]string{"url", "type", "label", "description"}, fs.Changed) {
			return withExitCode(exitUsage, errors.New("nothing to change: give --url, --type, --label or --description (landlord subscriptions enable, disable and rotate change the rest)"))
		}
		if fs.Changed("url") {
			req.URL = &url
		}
		if fs.Changed("description") {
			req.Description = &desc
		}
		if fs.Changed("type") {
			t, err := eventTypeFlags(types)
			if err != nil {
				return err
			}
			t = append([]string{}, t...) // [] for every type, not null
			req.Types = &t
		}
		if fs.Changed("label") {
			l, err := selectorFlags(labels)
			if err != nil {
				return err
			}
			if l == nil {
				l = map[string]string{}
			}
			req.Labels = &l
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		s, err := c.Subscriptions().Update(contextOf(cmd), args[0], req, client.UpdateOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("update subscription %s: %w", args[0], err))
		}
		return printSubscription(cmd, cf.output, *s)
	}
	return cmd
}

func newSubscriptionRotateCommand() *cobra.Command {
	var (
		secret string
		keep   string
	)
	cmd := &cobra.Command{
		Use:   "rotate NAME [--secret whsec_...] [--previous-expires-in 24h]",
		Short: "Give a webhook subscription a new signing secret",
		Long: `Give a webhook subscription a new signing secret. The secrets it had keep
signing beside the new one until --previous-expires-in from now (default
24h; 0s ends them at once): each delivery meanwhile carries a signature by
each, so that the receiver can move to the new secret without missing one.

Without --secret, landlord makes the new secret and prints it: that is the
only time it is shown. --secret - reads one from standard input.`,
		Example: `  landlord subscriptions rotate billing
  landlord subscriptions rotate billing --previous-expires-in 1h
  landlord subscriptions rotate billing --previous-expires-in 0s  # the old secret leaked: end it now`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&secret, "secret", "", "the new signing secret, whsec_ and base64; - reads it from standard input (default a new one, printed once; never shown)")
	fs.StringVar(&keep, "previous-expires-in", "", "how long the secrets it had keep signing, from 0s to 720h (default the server's, 24h)")
	cmd.ValidArgsFunction = completeSubscriptionNames(cf)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if keep != "" {
			if d, err := time.ParseDuration(keep); err != nil || d < 0 || d > 720*time.Hour {
				return withExitCode(exitUsage, fmt.Errorf("--previous-expires-in %q: give a duration from 0s to 720h, such as 24h or 30m", keep))
			}
		}
		given, err := secretFlag(cmd, secret)
		if err != nil {
			return err
		}
		req := client.RotateSecretRequest{Secret: given, PreviousExpiresIn: keep}
		if given == "" {
			req.Secret = client.NewSecret()
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		s, err := c.Subscriptions().RotateSecret(contextOf(cmd), args[0], req, client.UpdateOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("rotate the secret of subscription %s: %w", args[0], err))
		}
		if given != "" {
			return printSubscription(cmd, cf.output, *s)
		}
		return printWithSecret(cmd, cf.output, *s, req.Secret)
	}
	return cmd
}

// secretFlag is the secret --secret gives: "" when it is not given (one
// is then made), the first line of standard input for -.
func secretFlag(cmd *cobra.Command, value string) (string, error) {
	if !cmd.Flags().Changed("secret") {
		return "", nil
	}
	if value == "-" {
		line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
		if value = strings.TrimSpace(line); value == "" {
			if err != nil && !errors.Is(err, io.EOF) {
				return "", withExitCode(exitUsage, fmt.Errorf("--secret -: read standard input: %w", err))
			}
			return "", withExitCode(exitUsage, errors.New("--secret -: standard input holds no secret; leave --secret out to have one made"))
		}
		return value, nil
	}
	if strings.TrimSpace(value) == "" {
		return "", withExitCode(exitUsage, errors.New("--secret is empty; leave it out to have one made"))
	}
	return value, nil
}

// selectorFlags reads --label key=value flags into a selector; an empty
// value stands for none, and a selector of none is nil.
func selectorFlags(values []string) (map[string]string, error) {
	values = slices.DeleteFunc(slices.Clone(values), func(v string) bool { return strings.TrimSpace(v) == "" })
	return parsePairs("label", values)
}

// subscriptionWithSecret is what a verb that made a secret prints with -o
// json or yaml: the subscription as the API shows it, and the secret, which
// the API never shows.
type subscriptionWithSecret struct {
	client.Subscription
	Secret string `json:"secret"`
}

// printWithSecret writes a subscription and the secret landlord made for
// it, the one time the secret is shown, with a note on stderr saying so.
func printWithSecret(cmd *cobra.Command, format string, s client.Subscription, secret string) error {
	out := cmd.OutOrStdout()
	if format != "table" {
		if err := printObject(out, format, subscriptionWithSecret{Subscription: s, Secret: secret}); err != nil {
			return err
		}
	} else {
		if err := renderSubscription(out, s, now()); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nSecret: %s\n", secret)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "\nThis is the only time landlord shows the secret: give it to the receiver now.\n"+
		"Receivers verify each delivery's webhook-signature with it (Standard Webhooks, HMAC-SHA256; docs/events.md has an example).\n"+
		"If it is lost or leaks, make another with: landlord subscriptions rotate %s\n", s.Name)
	return nil
}
