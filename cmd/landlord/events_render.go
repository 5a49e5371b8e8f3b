package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// eventColumns are the columns of the event tables.
var eventColumns = []string{"SEQUENCE", "TIME", "TYPE", "SUBJECT", "TENANT", "STATUS", "MESSAGE"}

// eventCells are the cells of an event's row: for a tenant's event, the
// tenant's name and status when it was written and the message of the
// history entry it stands for; messages are cut with cut.
func eventCells(e client.CloudEvent, cut func(string, int) string) []string {
	var name, status, message string
	if d, ok := client.TenantOf(e); ok {
		name, status, message = d.Tenant.Name, d.Tenant.Status, cut(d.Event.Message, 80)
	}
	return []string{e.Sequence, e.Time.UTC().Format(time.RFC3339), e.Type, e.Subject, name, status, message}
}

// renderCloudEvents is the table of a page of the feed; messages are cut
// as cutFor says.
func renderCloudEvents(w io.Writer, es []client.CloudEvent) error {
	cut := cutFor(w)
	tw := newTable(w)
	fmt.Fprintln(tw, strings.Join(eventColumns, "\t"))
	for _, e := range es {
		fmt.Fprintln(tw, strings.Join(eventCells(e, cut), "\t"))
	}
	return tw.Flush()
}

// eventWidths are the widths the rows of a followed feed are padded to, as
// no table can measure events still to come: a sequence of 8 digits, a
// time, the longest type, a tenant's id, and a name and a status as most
// are. A longer cell pushes the rest of its row on.
var eventWidths = []int{8, len("2006-01-02T15:04:05Z"), len(client.EventTenantDeletionRequested), 36, 16, 12}

// newEventRows returns what writes each event of a followed feed as a row
// of padded columns, the header first; table false writes nothing (the
// events are printed otherwise).
func newEventRows(w io.Writer, table bool) func(client.CloudEvent) error {
	cut := cutFor(w)
	header := false
	row := func(cells []string) error {
		var b strings.Builder
		for i, c := range cells {
			if i < len(eventWidths) {
				fmt.Fprintf(&b, "%-*s", eventWidths[i]+tablePadding, c)
			} else {
				b.WriteString(c)
			}
		}
		_, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		return err
	}
	return func(e client.CloudEvent) error {
		if !table {
			return nil
		}
		if !header {
			header = true
			if err := row(eventColumns); err != nil {
				return err
			}
		}
		return row(eventCells(e, cut))
	}
}
