package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newSubscriptionsCommand) }

func newSubscriptionsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "subscriptions",
		Aliases: []string{"subscription"},
		Short:   "Manage webhook subscriptions: where landlord posts its events",
		Long: `A subscription is a URL that landlord posts its events to (the CloudEvents
landlord events lists), those of the types and tenants' labels it chooses.
Each delivery is signed by the Standard Webhooks scheme (webhook-id,
webhook-timestamp and webhook-signature headers, HMAC-SHA256) with the
subscription's secret, which a receiver verifies; landlord shows a secret
once, when it makes it. A delivery the receiver does not answer with 2xx is
tried again, with backoff, for a day; then it fails, and the subscription is
disabled until enabled again. The delivery log shows every attempt, and
redeliver sends events again.

The URL is https; http only to a receiver on this host (loopback). A URL
whose address is private is refused unless the server's operator allows its
network (events.allow_networks). docs/events.md has a receiver's example.`,
		Example: `  landlord subscriptions create billing --url https://billing.example.com/hooks --type landlord.tenant.ready
  landlord subscriptions list
  landlord subscriptions deliveries billing --state failed
  landlord subscriptions redeliver billing --since 2h`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		// Run, so that an unknown verb is refused rather than shown help.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSubscriptionCreateCommand(), newSubscriptionListCommand(), newSubscriptionGetCommand(),
		newSubscriptionUpdateCommand(), newSubscriptionEnableCommand(true), newSubscriptionEnableCommand(false),
		newSubscriptionDeleteCommand(), newSubscriptionRotateCommand(),
		newSubscriptionDeliveriesCommand(), newSubscriptionDeliveryCommand(), newSubscriptionRedeliverCommand())
	return cmd
}

func newSubscriptionListCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the webhook subscriptions",
		Long: `List the webhook subscriptions: each one's URL, the event types and tenant
labels it chooses (every type, every tenant when none), and whether it is
enabled; REASON says why landlord disabled one.`,
		Example: `  landlord subscriptions list
  landlord subscriptions list -o json | jq -r '.subscriptions[] | select(.enabled | not) | .name'`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		list, err := c.Subscriptions().List(contextOf(cmd))
		if err != nil {
			return exitFor(fmt.Errorf("list subscriptions: %w", err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, list)
		}
		if len(list.Subscriptions) == 0 {
			fmt.Fprintln(cmd.ErrOrStderr(), "no subscriptions; create one with: landlord subscriptions create NAME --url URL")
			return nil
		}
		return renderSubscriptions(cmd.OutOrStdout(), list.Subscriptions, now())
	}
	return cmd
}

func newSubscriptionGetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show a webhook subscription",
		Long: `Show a webhook subscription by name or id: its URL, filters, whether it is
enabled, and its secrets by their dates (never their values): a rotated-out
secret signs beside the new one until it expires.`,
		Example: `  landlord subscriptions get billing
  landlord subscriptions get billing -o yaml`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = completeSubscriptionNames(cf)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		s, err := c.Subscriptions().Get(contextOf(cmd), args[0])
		if err != nil {
			return exitFor(fmt.Errorf("subscription %s: %w", args[0], err))
		}
		return printSubscription(cmd, cf.output, *s)
	}
	return cmd
}

// newSubscriptionEnableCommand is subscriptions enable, or disable.
func newSubscriptionEnableCommand(enable bool) *cobra.Command {
	verb, short, long := "enable", "Enable a webhook subscription",
		`Enable a webhook subscription: landlord delivers to it again, from where it
stopped, and forgets why it disabled it. Deliveries that failed meanwhile
stay failed: send them again with landlord subscriptions redeliver.`
	if !enable {
		verb, short, long = "disable", "Disable a webhook subscription",
			`Disable a webhook subscription: landlord delivers nothing to it until it is
enabled again. Events written meanwhile are delivered then.`
	}
	cmd := &cobra.Command{
		Use:     verb + " NAME",
		Short:   short,
		Long:    long,
		Example: "  landlord subscriptions " + verb + " billing",
		Args:    cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = completeSubscriptionNames(cf)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		s, err := c.Subscriptions().Update(contextOf(cmd), args[0], client.UpdateSubscriptionRequest{Enabled: &enable}, client.UpdateOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("%s subscription %s: %w", verb, args[0], err))
		}
		return printSubscription(cmd, cf.output, *s)
	}
	return cmd
}

func newSubscriptionDeleteCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a webhook subscription and its delivery log",
		Long: `Delete a webhook subscription and its delivery log: landlord posts nothing
more to its URL, and its pending deliveries are dropped. To stop deliveries
for a while, disable it instead.`,
		Example: `  landlord subscriptions delete billing`,
		Args:    cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = completeSubscriptionNames(cf)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		if err := c.Subscriptions().Delete(contextOf(cmd), args[0]); err != nil {
			return exitFor(fmt.Errorf("delete subscription %s: %w", args[0], err))
		}
		if cf.output != "table" {
			// The API answers a delete with nothing; this says what was
			// deleted, for scripts.
			return printObject(cmd.OutOrStdout(), cf.output, map[string]any{"name": args[0], "deleted": true})
		}
		fmt.Fprintf(cmd.OutOrStdout(), "deleted subscription %s and its delivery log\n", args[0])
		return nil
	}
	return cmd
}

// printSubscription writes a subscription in the output format.
func printSubscription(cmd *cobra.Command, format string, s client.Subscription) error {
	if format == "table" {
		return renderSubscription(cmd.OutOrStdout(), s, now())
	}
	return printObject(cmd.OutOrStdout(), format, s)
}
