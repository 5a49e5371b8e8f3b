package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// deliveryStates are the states a delivery is in, for --state.
var deliveryStates = []string{client.DeliveryPending, client.DeliveryDelivered, client.DeliveryFailed}

func newSubscriptionDeliveriesCommand() *cobra.Command {
	var (
		opts     client.DeliveryListOptions
		allPages bool
	)
	cmd := &cobra.Command{
		Use:   "deliveries NAME [--state pending|delivered|failed]",
		Short: "Show a webhook subscription's delivery log",
		Long: `Show a webhook subscription's deliveries, newest first, a page at a time
(--all-pages for all of them): each event's delivery, its state, how many
attempts it took, the receiver's last answer and what went wrong. A pending
delivery is tried again at NEXT ATTEMPT; a failed one was given up on, and
landlord subscriptions redeliver sends it again. landlord subscriptions
delivery NAME EVENT shows every attempt at one.

On a terminal, LAST ERROR is cut to fit, ending in …; written to a file or a
pipe, it is whole.`,
		Example: `  landlord subscriptions deliveries billing
  landlord subscriptions deliveries billing --state failed --all-pages -o json | jq -r '.deliveries[].event_id'`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&opts.State, "state", "", "only deliveries in this state: pending, delivered or failed")
	fs.BoolVar(&allPages, "all-pages", false, "list every page, not just the first")
	fs.IntVar(&opts.PageSize, "page-size", 0, fmt.Sprintf("deliveries per page, 1 to %d (default the server's, %d)", client.MaxPageSize, client.DefaultPageSize))
	fs.StringVar(&opts.PageToken, "page-token", "", "start at this page (the next_page_token of the previous one)")
	cmd.ValidArgsFunction = completeSubscriptionNames(cf)
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(deliveryStates, cobra.ShellCompDirectiveNoFileComp))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if opts.State != "" && !slices.Contains(deliveryStates, opts.State) {
			return withExitCode(exitUsage, fmt.Errorf("--state %q: use pending, delivered or failed", opts.State))
		}
		if cmd.Flags().Changed("page-size") && (opts.PageSize < 1 || opts.PageSize > client.MaxPageSize) {
			return withExitCode(exitUsage, fmt.Errorf("--page-size %d: must be from 1 to %d", opts.PageSize, client.MaxPageSize))
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		ctx := contextOf(cmd)
		var list *client.DeliveryList
		if allPages {
			list = &client.DeliveryList{Deliveries: []client.Delivery{}}
			for d, err := range c.Subscriptions().AllDeliveries(ctx, args[0], opts) {
				if err != nil {
					return exitFor(fmt.Errorf("subscription %s: deliveries: %w", args[0], err))
				}
				list.Deliveries = append(list.Deliveries, d)
			}
		} else if list, err = c.Subscriptions().Deliveries(ctx, args[0], opts); err != nil {
			return exitFor(fmt.Errorf("subscription %s: deliveries: %w", args[0], err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, list)
		}
		if len(list.Deliveries) == 0 {
			what := "deliveries"
			if opts.State != "" {
				what = opts.State + " deliveries"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "subscription %s has no %s\n", args[0], what)
			return nil
		}
		if err := renderDeliveries(cmd.OutOrStdout(), list.Deliveries, now()); err != nil {
			return err
		}
		if list.NextPageToken != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "more deliveries follow: add --page-token %s, or --all-pages\n", list.NextPageToken)
		}
		return nil
	}
	return cmd
}

func newSubscriptionDeliveryCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delivery NAME EVENT",
		Short: "Show one delivery of a webhook subscription and every attempt at it",
		Long: `Show the delivery of one event (its id, as landlord subscriptions deliveries
and landlord events -o json show it) to a webhook subscription, and every
attempt at it, oldest first: when, the receiver's status, how long it took,
what went wrong, and the start of the receiver's answer.`,
		Example: `  landlord subscriptions delivery billing evt_9f1c2d3e4a5b6c7d8e9f0a1b2c3d4e5f`,
		Args:    cobra.ExactArgs(2),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = completeDelivery(cf)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		d, err := c.Subscriptions().Delivery(contextOf(cmd), args[0], args[1])
		if err != nil {
			return exitFor(fmt.Errorf("subscription %s: delivery of %s: %w", args[0], args[1], err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, d)
		}
		return renderDelivery(cmd.OutOrStdout(), *d, now())
	}
	return cmd
}

// completeDelivery completes delivery's arguments: a subscription, then
// the events of its latest deliveries, each described by its type and
// state.
func completeDelivery(cf *clientFlags) cobra.CompletionFunc {
	names := completeSubscriptionNames(cf)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return names(cmd, args, toComplete)
		case 1:
		default:
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := cf.client(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(contextOf(cmd), 3*time.Second)
		defer cancel()
		page, err := c.Subscriptions().Deliveries(ctx, args[0], client.DeliveryListOptions{PageSize: 100})
		if err != nil {
			cobra.CompDebugln("landlord: list deliveries: "+err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, d := range page.Deliveries {
			out = append(out, cobra.CompletionWithDesc(d.EventID, d.Type+", "+d.State))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func newSubscriptionRedeliverCommand() *cobra.Command {
	var event, since, until string
	cmd := &cobra.Command{
		Use:   "redeliver NAME (--event EVENT | --since TIME [--until TIME])",
		Short: "Send events to a webhook subscription again",
		Long: `Send events to a webhook subscription again: one (--event, its id), or those
written from --since until --until (default now) that the subscription
chooses, at most 7 days of them. Their deliveries are made pending, due now,
and their retries start over; each carries its event's id as webhook-id
again, so that a receiver that deduplicates by it sees a repeat.
Events are kept for the server's events.retention (7 days by default).

TIME is RFC 3339 (2025-06-01T12:00:00Z), or a duration meaning that long
ago (2h, 30m).`,
		Example: `  landlord subscriptions redeliver billing --event evt_9f1c2d3e4a5b6c7d8e9f0a1b2c3d4e5f
  landlord subscriptions redeliver billing --since 2h
  landlord subscriptions redeliver billing --since 2025-06-01T00:00:00Z --until 2025-06-02T00:00:00Z`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&event, "event", "", "the id of the event to send again")
	fs.StringVar(&since, "since", "", "send the events written from this time: RFC 3339, or a duration meaning that long ago")
	fs.StringVar(&until, "until", "", "with --since, send those written before this time (default now)")
	cmd.MarkFlagsMutuallyExclusive("event", "since")
	cmd.MarkFlagsMutuallyExclusive("event", "until")
	cmd.MarkFlagsOneRequired("event", "since")
	cmd.ValidArgsFunction = completeSubscriptionNames(cf)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		at := now()
		req := client.RedeliverRequest{EventID: event}
		if since != "" {
			t, err := parseWhen("since", since, at)
			if err != nil {
				return err
			}
			req.Since = &t
		}
		if until != "" {
			t, err := parseWhen("until", until, at)
			if err != nil {
				return err
			}
			if !t.After(*req.Since) {
				return withExitCode(exitUsage, fmt.Errorf("--until %s is not after --since %s", t.Format(time.RFC3339), req.Since.Format(time.RFC3339)))
			}
			req.Until = &t
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		res, err := c.Subscriptions().Redeliver(contextOf(cmd), args[0], req)
		if err != nil {
			return exitFor(fmt.Errorf("redeliver to subscription %s: %w", args[0], err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, res)
		}
		if res.Deliveries == 0 {
			fmt.Fprintf(cmd.OutOrStdout(), "no events to send to %s again: none written then that it chooses\n", args[0])
			return nil
		}
		fmt.Fprintf(cmd.OutOrStdout(), "sending %s to %s again; see how they go with: landlord subscriptions deliveries %s\n",
			plural(res.Deliveries, "event"), args[0], args[0])
		return nil
	}
	return cmd
}

// parseWhen reads a time flag: RFC 3339, or a duration meaning that long
// before at.
func parseWhen(flag, value string, at time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, value); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(value)
	switch {
	case err != nil:
		return time.Time{}, withExitCode(exitUsage, fmt.Errorf("--%s %q: give a time in RFC 3339 (2025-06-01T12:00:00Z) or a duration meaning that long ago (2h)", flag, value))
	case d < 0:
		return time.Time{}, withExitCode(exitUsage, errors.New("--"+flag+" "+value+": a duration means that long ago; give it without a sign"))
	}
	return at.Add(-d).UTC().Truncate(time.Second), nil
}
