package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newEventsCommand) }

// eventFlags are the flags of landlord events.
type eventFlags struct {
	after    string
	types    []string
	pageSize int
	allPages bool
	follow   bool
}

func newEventsCommand() *cobra.Command {
	var f eventFlags
	cmd := &cobra.Command{
		Use:   "events [--after SEQUENCE] [--type TYPE...] [--follow]",
		Short: "List the event feed, or follow it",
		Long: `List the events landlord publishes, oldest first: tenants created, changed,
ready, failed, drifted and deleted, placements moved, rollouts started,
halted and completed, plan versions published (docs/events.md is the
catalogue). They are CloudEvents, the ones webhooks deliver (landlord
subscriptions); SEQUENCE orders them, and --after SEQUENCE reads on after
one. TENANT and STATUS are a tenant's name and status when the event was
written, MESSAGE what changed.

Without --follow, landlord events lists a page (--page-size, default the
server's, 50; --all-pages for every event the server keeps), and says the
--after that reads on. With --follow it lists the events after --after
(every event the server keeps without it), then each as it is written, until
interrupted; a dropped connection is made again, from the last event shown,
so that none is missed or shown twice. -o json prints each event as one line
of JSON (the CloudEvent as webhooks deliver it), -o yaml as a document.`,
		Example: `  landlord events
  landlord events --type landlord.tenant.ready --type landlord.tenant.failed
  landlord events --after 1042 --all-pages -o json | jq -r '.events[].id'
  landlord events --follow
  landlord events --follow --type landlord.tenant.ready -o json | jq -c .data.tenant.name`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&f.after, "after", "", "read the events after this sequence (the SEQUENCE of the last event read)")
	fs.StringArrayVar(&f.types, "type", nil, "only events of this type (repeatable, or comma-separated; see docs/events.md)")
	fs.IntVar(&f.pageSize, "page-size", 0, fmt.Sprintf("events per page, 1 to %d (default the server's, %d)", client.MaxPageSize, client.DefaultPageSize))
	fs.BoolVar(&f.allPages, "all-pages", false, "list every event the server keeps after --after, not just a page")
	fs.BoolVarP(&f.follow, "follow", "f", false, "go on showing events as they are written, until interrupted")
	cmd.MarkFlagsMutuallyExclusive("follow", "all-pages")
	cmd.MarkFlagsMutuallyExclusive("follow", "page-size")
	_ = cmd.RegisterFlagCompletionFunc("type", completeEventTypes)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		types, err := eventTypeFlags(f.types)
		if err != nil {
			return err
		}
		if cmd.Flags().Changed("page-size") && (f.pageSize < 1 || f.pageSize > client.MaxPageSize) {
			return withExitCode(exitUsage, fmt.Errorf("--page-size %d: must be from 1 to %d", f.pageSize, client.MaxPageSize))
		}
		if f.after != "" && !isSequence(f.after) {
			return withExitCode(exitUsage, fmt.Errorf("--after %q: give the SEQUENCE of an event, a whole number (landlord events shows them)", f.after))
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		if f.follow {
			return followEvents(cmd, c, cf.output, client.StreamOptions{After: f.after, Types: types})
		}
		return listEvents(cmd, c, cf.output, f, types)
	}
	return cmd
}

// eventTypeFlags reads --type: repeatable, or comma-separated; each one of
// client.EventTypes, else a usage error listing them.
func eventTypeFlags(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t == "" {
				continue
			}
			if !client.IsEventType(t) {
				return nil, withExitCode(exitUsage, fmt.Errorf("--type %q is not an event type; the types are %s", t, strings.Join(client.EventTypes(), ", ")))
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// isSequence reports whether s is a sequence of the feed: a whole number.
func isSequence(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != "" && len(s) <= 19
}

// listEvents lists a page of the feed, or every page with --all-pages.
func listEvents(cmd *cobra.Command, c *client.Client, output string, f eventFlags, types []string) error {
	ctx := contextOf(cmd)
	opts := client.EventListOptions{After: f.after, Types: types, PageSize: f.pageSize}
	var page *client.EventFeed
	if f.allPages {
		page = &client.EventFeed{Events: []client.CloudEvent{}, Next: f.after}
		for e, err := range c.Events().All(ctx, opts) {
			if err != nil {
				return exitFor(fmt.Errorf("list events: %w", err))
			}
			page.Events = append(page.Events, e)
			page.Next = e.Sequence
		}
		if page.Next == "" {
			page.Next = "0"
		}
	} else {
		var err error
		if page, err = c.Events().List(ctx, opts); err != nil {
			return exitFor(fmt.Errorf("list events: %w", err))
		}
	}
	if output != "table" {
		return printObject(cmd.OutOrStdout(), output, page)
	}
	if len(page.Events) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "no events after sequence %s; follow them as they are written with: landlord events --follow --after %s\n", page.Next, page.Next)
		return nil
	}
	if err := renderCloudEvents(cmd.OutOrStdout(), page.Events); err != nil {
		return err
	}
	if size := cmp.Or(f.pageSize, client.DefaultPageSize); !f.allPages && len(page.Events) >= size {
		fmt.Fprintf(cmd.ErrOrStderr(), "more events may follow: landlord events --after %s\n", page.Next)
	}
	return nil
}

// followEvents shows the events of a stream until it ends: with the
// command's context, or with an error that another connection would meet
// again. A dropped connection is noted on stderr, and made again.
func followEvents(cmd *cobra.Command, c *client.Client, output string, opts client.StreamOptions) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	opts.Disconnected = func(err error, wait time.Duration) {
		fmt.Fprintf(stderr, "landlord: %v; connecting again in %s\n", err, wait.Round(100*time.Millisecond))
	}
	row := newEventRows(stdout, output == "table")
	for e, err := range c.Events().Stream(contextOf(cmd), opts) {
		if err != nil {
			return exitFor(fmt.Errorf("follow events: %w", err))
		}
		if err := printStreamed(stdout, output, row, e); err != nil {
			return err
		}
	}
	return nil
}

// printStreamed writes one event of a stream: a row of the table, a line of
// JSON, or a YAML document.
func printStreamed(w io.Writer, output string, row func(client.CloudEvent) error, e client.CloudEvent) error {
	switch output {
	case "json":
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		if _, err := fmt.Fprintln(w, "---"); err != nil {
			return err
		}
		return printObject(w, output, e)
	}
	return row(e)
}
