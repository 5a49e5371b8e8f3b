package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/jaxxstorm/landlord/client"
)

// tablePadding is the spaces between the columns of a table.
const tablePadding = 2

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, tablePadding, ' ', 0)
}

// fieldRows returns what writes the rows of a view of one thing's fields
// to tw, a "Key:<tab>value" line each, leaving out those with no value.
func fieldRows(tw io.Writer) func(k, v string) {
	return func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
}

// renderTenants is the list table. PROVIDER is a tenant's provider, or
// the providers of its placements joined with + ("docker+nomad"); one the
// server has not enabled (enabled says, when not nil) is marked
// (providerCell). PLAN, shown when a tenant follows a plan, is its plan@version,
// marked when pinned. ENDPOINTS is a tenant's first endpoint, and how many more it has
// ("127.0.0.1:49153 +1"; landlord get lists them all).
//
// cols is the width of the terminal the table is shown on, 0 when it is not
// shown on one. On a terminal the message, the last column, is cut to what
// the other columns leave of the width (maxMessageCols at most), so that
// rows do not wrap; when that is fewer than minMessageCols, the endpoints are
// cut in their middle (keeping the port and the count) to leave it that
// many, down to minEndpointCols; a row that is still too wide wraps.
// Elsewhere (a file, a pipe) nothing is cut, as cutFor has it.
func renderTenants(w io.Writer, ts []client.Tenant, at time.Time, enabled func(provider string) bool, cols int) error {
	plans := slices.ContainsFunc(ts, func(t client.Tenant) bool { return t.Plan != nil })
	header := []string{"NAME", "STATUS", "PROVIDER", "ENDPOINTS", "AGE"}
	if plans {
		header = slices.Insert(header, 3, "PLAN")
	}
	endpointsCol := slices.Index(header, "ENDPOINTS")
	rows := make([][]string, len(ts))
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for i, t := range ts {
		rows[i] = []string{t.Name, t.Status, providerCell(t, enabled), endpointsCell(t.Endpoints, 0), age(at.Sub(t.CreatedAt))}
		if plans {
			rows[i] = slices.Insert(rows[i], 3, planString(t.Plan))
		}
		for j, c := range rows[i] {
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	cut := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if cols > 0 {
		// One column short of the width: some terminals wrap on the last.
		left := cols - 1
		for j, n := range widths {
			if j != endpointsCol {
				left -= n + tablePadding
			}
		}
		left -= tablePadding // after the endpoints
		if endpoints := widths[endpointsCol]; left-endpoints < minMessageCols && endpoints > minEndpointCols {
			endpoints = max(minEndpointCols, left-minMessageCols)
			for i, t := range ts {
				rows[i][endpointsCol] = endpointsCell(t.Endpoints, endpoints)
			}
			widths[endpointsCol] = endpoints
		}
		message := min(maxMessageCols, max(minMessageCols, left-widths[endpointsCol]))
		cut = func(s string) string { return fit(s, message) }
	}
	tw := newTable(w)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\tMESSAGE")
	for i, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\n", strings.Join(rows[i], "\t"), cut(t.StatusMessage))
	}
	return tw.Flush()
}

// The widths of the list table's columns that may be cut.
const (
	maxMessageCols  = 80
	minMessageCols  = 20
	minEndpointCols = len("255.255.255.255:65535")
)

// endpointsCell is the list table's ENDPOINTS: the first endpoint's address
// and the count of the others, in at most cols columns (0: no limit), the
// address cut in its middle when it must be, so that its port and the count
// stay.
func endpointsCell(es []client.Endpoint, cols int) string {
	if len(es) == 0 {
		return ""
	}
	more := ""
	if len(es) > 1 {
		more = fmt.Sprintf(" +%d", len(es)-1)
	}
	addr := []rune(es[0].Address)
	if room := cols - len(more); cols > 0 && len(addr) > room && room > 2 {
		tail := (room - 1) / 2
		addr = append(append(addr[:room-1-tail:room-1-tail], '…'), addr[len(addr)-tail:]...)
	}
	return string(addr) + more
}

// notEnabledMark follows, in the list table, the provider of a tenant that
// the server has not enabled.
const notEnabledMark = " (not enabled)"

// renderTenant shows one tenant's fields, one a line. A tenant with
// placements shows its providers joined (providersOf), then each
// placement's own fields, endpoints, drift and config (renderPlacement)
// in place of the tenant's.
func renderTenant(w io.Writer, t client.Tenant, at time.Time) error {
	placed := len(t.Placements) > 0
	tw := newTable(w)
	row := fieldRows(tw)
	row("Name", t.Name)
	row("ID", t.ID)
	row("Status", t.Status)
	row("Message", t.StatusMessage)
	row("Provider", providersOf(t))
	if t.Generation > 0 { // a tenant stored; not one a dry run shows
		row("Generation", fmt.Sprintf("%d (observed %d)", t.Generation, t.ObservedGeneration))
		row("Version", fmt.Sprint(t.Version))
	}
	row("Plan", planString(t.Plan))
	row("Maintenance window", windowString(t.MaintenanceWindow))
	attemptsRow(row, t.Attempts, t.RetryAt, at)
	row("Labels", pairs(t.Labels))
	row("Annotations", pairs(t.Annotations))
	if !placed {
		endpointRows(tw, "", t.Endpoints)
		driftRows(tw, "", t.Drift, at)
	}
	if !t.CreatedAt.IsZero() {
		row("Created", when(t.CreatedAt, at))
	}
	if !t.UpdatedAt.IsZero() {
		row("Updated", when(t.UpdatedAt, at))
	}
	if t.DeletedAt != nil {
		row("Deleted", when(*t.DeletedAt, at))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if placed {
		for _, p := range t.Placements {
			if err := renderPlacement(w, p, at); err != nil {
				return err
			}
		}
		return nil
	}
	if c := indentedYAML(t.ComputeConfig, "  "); c != "" && t.Plan != nil {
		fmt.Fprintf(w, "Compute config (overrides of plan %s@%d):\n%s", t.Plan.Name, t.Plan.Version, c)
	} else if c != "" {
		fmt.Fprintf(w, "Compute config:\n%s", c)
	}
	if c := indentedYAML(t.EffectiveConfig, "  "); c != "" {
		fmt.Fprintf(w, "Effective config:\n%s", c)
	}
	return nil
}

// attemptsRow writes the Attempts row of a tenant or a placement that has
// made any: how many, and when the next is.
func attemptsRow(row func(k, v string), attempts int, retryAt *time.Time, at time.Time) {
	if attempts == 0 {
		return
	}
	s := fmt.Sprint(attempts)
	if retryAt != nil {
		s += fmt.Sprintf(" (next in %s)", age(retryAt.Sub(at)))
	}
	row("Attempts", s)
}

// endpointRows writes the Endpoints rows of a view of fields to tw, one
// endpoint a line, each line begun with indent.
func endpointRows(tw io.Writer, indent string, es []client.Endpoint) {
	for i, e := range es {
		k := ""
		if i == 0 {
			k = "Endpoints:"
		}
		name := e.Container
		if e.Name != "" {
			name += "/" + e.Name
		}
		fmt.Fprintf(tw, "%s%s\t%s %d/%s → %s\n", indent, k, name, e.ContainerPort, e.Protocol, e.Address)
	}
}

// driftRows writes the Drift row of a view of fields to tw, and a line
// for each of its differences, each line begun with indent; nothing
// without a drift.
func driftRows(tw io.Writer, indent string, d *client.Drift, at time.Time) {
	if d == nil {
		return
	}
	what := "repairing"
	switch {
	case d.Policy == "observe" && d.ResolvedAt == nil:
		what = "observed, not repaired (drift policy observe)"
	case d.Policy == "observe":
		what = "observed, then undone by hand " + when(*d.ResolvedAt, at)
	case d.ResolvedAt != nil:
		what = "repaired " + when(*d.ResolvedAt, at)
	}
	fmt.Fprintf(tw, "%sDrift:\t%s; found %s at generation %d\n", indent, what, when(d.DetectedAt, at), d.Generation)
	for _, x := range d.Differences {
		// Worded as the controller words it in the drift_detected event.
		fmt.Fprintf(tw, "%s\t  %s\n", indent, x)
	}
}

// renderDryRun shows the answer to a create's dry run: it says that
// nothing was stored, then shows the tenant as it would be created, without
// what only a stored tenant has (an id, status, generation, version and
// times, and its placements' workloads and status): the server's answer
// has them, the id one that no tenant will have.
func renderDryRun(w io.Writer, t client.Tenant, at time.Time) error {
	if _, err := fmt.Fprintln(w, "Dry run: nothing stored. Without --dry-run, landlord create would store:"); err != nil {
		return err
	}
	would := client.Tenant{
		Name: t.Name, ComputeProvider: t.ComputeProvider, ComputeConfig: t.ComputeConfig, EffectiveConfig: t.EffectiveConfig,
		Plan: t.Plan, MaintenanceWindow: t.MaintenanceWindow, Labels: t.Labels, Annotations: t.Annotations,
	}
	for _, p := range t.Placements {
		would.Placements = append(would.Placements, client.Placement{
			Name: p.Name, ComputeProvider: p.ComputeProvider, ComputeConfig: p.ComputeConfig, EffectiveConfig: p.EffectiveConfig,
		})
	}
	return renderTenant(w, would, at)
}

// pairs is a map as sorted k=v pairs.
func pairs(m map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return strings.Join(out, ", ")
}

// renderEvents is the history table; messages are cut as cutFor says.
// PLACEMENT, shown when an event names a placement, is the placement each
// is about (none for the tenant as a whole).
func renderEvents(w io.Writer, events []client.Event, at time.Time) error {
	cut := cutFor(w)
	placements := slices.ContainsFunc(events, func(e client.Event) bool { return e.Placement != "" })
	tw := newTable(w)
	if placements {
		fmt.Fprint(tw, "AGE\tPLACEMENT\t")
	} else {
		fmt.Fprint(tw, "AGE\t")
	}
	fmt.Fprintln(tw, "TYPE\tSTATUS\tGENERATION\tACTOR\tMESSAGE")
	for _, e := range events {
		status := e.To
		if e.From != "" {
			status = e.From + " → " + e.To
		}
		fmt.Fprintf(tw, "%s\t", age(at.Sub(e.Time)))
		if placements {
			fmt.Fprintf(tw, "%s\t", e.Placement)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", e.Type, status, e.Generation, e.Actor, cut(e.Message, 100))
	}
	return tw.Flush()
}

// renderProviders is the providers table; messages are cut as cutFor says.
func renderProviders(w io.Writer, ps []client.Provider) error {
	cut := cutFor(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tDEFAULT\tHEALTHY\tMESSAGE")
	for _, p := range ps {
		def, healthy := "", "yes"
		if p.Default {
			def = "yes"
		}
		if !p.Healthy {
			healthy = "no"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, def, healthy, cut(p.Message, 100))
	}
	return tw.Flush()
}

// schemaNode is the part of a JSON Schema the compute table shows.
type schemaNode struct {
	Ref         string                 `json:"$ref"`
	Type        any                    `json:"type"`
	Enum        []any                  `json:"enum"`
	Items       *schemaNode            `json:"items"`
	Description string                 `json:"description"`
	Properties  map[string]*schemaNode `json:"properties"`
	Required    []string               `json:"required"`
	Defs        map[string]*schemaNode `json:"$defs"`
}

// renderComputeConfig shows a provider's top-level config fields, from its
// schema, and its defaults; descriptions are cut as cutFor says.
func renderComputeConfig(w io.Writer, cfg client.ComputeConfig) error {
	cut := cutFor(w)
	fmt.Fprintf(w, "Provider: %s\n\n", cfg.Provider)
	var s schemaNode
	if err := json.Unmarshal(cfg.Schema, &s); err != nil {
		return fmt.Errorf("read the schema of %s: %w", cfg.Provider, err)
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "FIELD\tTYPE\tREQUIRED\tDESCRIPTION")
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		req := ""
		if slices.Contains(s.Required, name) {
			req = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, s.typeOf(p), req, cut(s.describe(p), 120))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if d := indentedYAML(cfg.Defaults, "  "); d != "" {
		fmt.Fprintf(w, "\nDefaults (merged under each tenant's config):\n%s", d)
	} else {
		fmt.Fprintln(w, "\nDefaults: none")
	}
	if cfg.Capabilities != nil {
		var yes, no []string
		for _, name := range slices.Sorted(maps.Keys(cfg.Capabilities)) {
			if cfg.Capabilities[name] {
				yes = append(yes, name)
			} else {
				no = append(no, name)
			}
		}
		fmt.Fprintf(w, "\nSupports: %s\n", cmp.Or(strings.Join(yes, ", "), "none of the optional capabilities"))
		if len(no) > 0 {
			fmt.Fprintf(w, "Does not support: %s\n", strings.Join(no, ", "))
		}
	}
	fmt.Fprintf(w, "\nThe whole schema: landlord compute --provider %s -o json\n", cfg.Provider)
	return nil
}

// resolve follows a local $ref.
func (s *schemaNode) resolve(p *schemaNode) (*schemaNode, string) {
	if p == nil || p.Ref == "" {
		return p, ""
	}
	name := strings.TrimPrefix(p.Ref, "#/$defs/")
	if d, ok := s.Defs[name]; ok {
		return d, name
	}
	return p, name
}

// typeOf is a short description of a property's type.
func (s *schemaNode) typeOf(p *schemaNode) string {
	d, name := s.resolve(p)
	if d == nil {
		return ""
	}
	if len(p.Enum) > 0 || len(d.Enum) > 0 {
		enum := p.Enum
		if len(enum) == 0 {
			enum = d.Enum
		}
		var vals []string
		for _, v := range enum {
			vals = append(vals, fmt.Sprint(v))
		}
		return "one of " + strings.Join(vals, ", ")
	}
	var t string
	switch v := d.Type.(type) {
	case string:
		t = v
	case []any:
		var ts []string
		for _, x := range v {
			ts = append(ts, fmt.Sprint(x))
		}
		t = strings.Join(ts, " or ")
	}
	if t == "array" && d.Items != nil {
		return "list of " + s.typeOf(d.Items)
	}
	if name != "" && (t == "object" || t == "") {
		return name
	}
	return t
}

func (s *schemaNode) describe(p *schemaNode) string {
	if p.Description != "" {
		return p.Description
	}
	d, _ := s.resolve(p)
	return d.Description
}
