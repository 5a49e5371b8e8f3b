package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// enabledText is whether a subscription is enabled, and, when landlord
// disabled it, that it did.
func enabledText(s client.Subscription) string {
	switch {
	case s.Enabled:
		return "enabled"
	case s.DisabledReason != "":
		return "disabled by landlord"
	}
	return "disabled"
}

// typesText is a subscription's event types, or "all".
func typesText(types []string) string {
	if len(types) == 0 {
		return "all"
	}
	return strings.Join(types, ",")
}

// renderSubscriptions is the subscription list table; reasons are cut as
// cutFor says.
func renderSubscriptions(w io.Writer, subs []client.Subscription, at time.Time) error {
	cut := cutFor(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSTATE\tURL\tTYPES\tLABELS\tAGE\tREASON")
	for _, s := range subs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, enabledText(s), s.URL, typesText(s.Types), pairs(s.Labels),
			age(at.Sub(s.CreatedAt)), cut(s.DisabledReason, 80))
	}
	return tw.Flush()
}

// renderSubscription shows one subscription's fields, one a line: its
// secrets by their dates, newest first.
func renderSubscription(w io.Writer, s client.Subscription, at time.Time) error {
	tw := newTable(w)
	row := fieldRows(tw)
	row("Name", s.Name)
	row("ID", s.ID)
	row("URL", s.URL)
	state := enabledText(s)
	if s.DisabledReason != "" {
		state += ": " + s.DisabledReason + "\n\t(enable it with: landlord subscriptions enable " + s.Name + ")"
	}
	row("State", state)
	row("Types", typesText(s.Types))
	if len(s.Labels) > 0 {
		row("Labels", pairs(s.Labels)+" (only tenants with all of them)")
	} else {
		row("Labels", "any (every tenant's events, and rollouts' and plans')")
	}
	row("Description", s.Description)
	for i, sec := range s.Secrets {
		k := ""
		if i == 0 {
			k = "Secrets:"
		}
		what := "made " + when(sec.CreatedAt, at)
		if sec.ExpiresAt != nil {
			what += fmt.Sprintf(", signs until %s (in %s)", sec.ExpiresAt.UTC().Format(time.RFC3339), age(sec.ExpiresAt.Sub(at)))
		}
		fmt.Fprintf(tw, "%s\t%s\n", k, what)
	}
	if s.Deliveries != nil {
		row("Pending deliveries", fmt.Sprint(s.Deliveries.Pending))
	}
	if s.Version > 0 {
		row("Version", fmt.Sprint(s.Version))
	}
	if !s.CreatedAt.IsZero() {
		row("Created", when(s.CreatedAt, at)+by(s.CreatedBy))
	}
	if !s.UpdatedAt.IsZero() && !s.UpdatedAt.Equal(s.CreatedAt) {
		row("Updated", when(s.UpdatedAt, at))
	}
	return tw.Flush()
}

// nextAttempt is when a pending delivery is tried next: "now", "in 5s";
// "-" for one that is not pending.
func nextAttempt(d client.Delivery, at time.Time) string {
	switch {
	case d.State != client.DeliveryPending || d.NextAttemptAt.IsZero():
		return "-"
	case !d.NextAttemptAt.After(at):
		return "now"
	}
	return "in " + age(d.NextAttemptAt.Sub(at))
}

// statusText is an HTTP status, "-" for none (no answer).
func statusText(status int) string {
	if status == 0 {
		return "-"
	}
	return fmt.Sprint(status)
}

// renderDeliveries is the delivery log table; errors are cut as cutFor
// says.
func renderDeliveries(w io.Writer, ds []client.Delivery, at time.Time) error {
	cut := cutFor(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "SEQUENCE\tEVENT\tTYPE\tSUBJECT\tSTATE\tATTEMPTS\tLAST STATUS\tNEXT ATTEMPT\tLAST ERROR")
	for _, d := range ds {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.Sequence, d.EventID, d.Type, d.Subject, d.State, d.Attempts,
			statusText(d.LastStatus), nextAttempt(d, at), cut(d.LastError, 80))
	}
	return tw.Flush()
}

// renderDelivery shows one delivery's fields, then its attempts, oldest
// first; on a terminal, errors and responses are cut as cutFor says.
func renderDelivery(w io.Writer, d client.Delivery, at time.Time) error {
	tw := newTable(w)
	row := fieldRows(tw)
	row("Event", d.EventID)
	row("Type", d.Type)
	row("Subject", d.Subject)
	row("Sequence", d.Sequence)
	row("State", d.State)
	row("Attempts", fmt.Sprint(d.Attempts))
	if next := nextAttempt(d, at); next != "-" {
		row("Next attempt", next)
	}
	if d.LastStatus != 0 {
		row("Last status", fmt.Sprint(d.LastStatus))
	}
	row("Last error", d.LastError)
	if !d.CreatedAt.IsZero() {
		row("Created", when(d.CreatedAt, at))
	}
	if !d.UpdatedAt.IsZero() {
		row("Updated", when(d.UpdatedAt, at))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(d.Log) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nAttempts:")
	iw := &indented{w: w, indent: "  "}
	cut := cutFor(iw)
	attempts := newTable(iw)
	fmt.Fprintln(attempts, "NUMBER\tTIME\tSTATUS\tLATENCY\tERROR\tRESPONSE")
	for _, a := range d.Log {
		latency := time.Duration(a.LatencyMS * float64(time.Millisecond)).Round(100 * time.Microsecond)
		fmt.Fprintf(attempts, "%d\t%s\t%s\t%s\t%s\t%s\n", a.Number, a.Time.UTC().Format(time.RFC3339), statusText(a.Status), latency,
			cut(a.Error, 60), cut(a.Response, 60))
	}
	return attempts.Flush()
}
