package main

import (
	"fmt"
	"io"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// renderPlans is the plan list table; descriptions are cut as cutFor says.
func renderPlans(w io.Writer, ps []client.Plan, at time.Time) error {
	cut := cutFor(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tPROVIDER\tCURRENT\tLATEST\tAGE\tDESCRIPTION")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Provider, versionNumber(p.CurrentVersion), versionNumber(p.LatestVersion),
			age(at.Sub(p.CreatedAt)), cut(p.Description, 80))
	}
	return tw.Flush()
}

// versionNumber is a plan's version, "-" for none.
func versionNumber(v int64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprint(v)
}

// renderPlan shows a plan's fields, then its versions and the config of
// its current one when versions are given.
func renderPlan(w io.Writer, p client.Plan, versions []client.PlanVersion, at time.Time) error {
	tw := newTable(w)
	row := fieldRows(tw)
	row("Name", p.Name)
	row("Provider", p.Provider)
	row("Description", p.Description)
	current := "none: publish one with landlord plan publish " + p.Name
	if p.CurrentVersion > 0 {
		current = fmt.Sprintf("%d (new tenants get it)", p.CurrentVersion)
	}
	row("Current version", current)
	if p.LatestVersion > p.CurrentVersion {
		row("Latest version", fmt.Sprintf("%d (tenants get it through a rollout: landlord rollout plan %s)", p.LatestVersion, p.Name))
	}
	if !p.CreatedAt.IsZero() {
		row("Created", when(p.CreatedAt, at)+by(p.CreatedBy))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(versions) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nVersions:")
	if err := renderVersions(&indented{w: w, indent: "  "}, versions, p.CurrentVersion, at); err != nil {
		return err
	}
	for _, v := range versions {
		if v.Version == p.CurrentVersion {
			if c := indentedYAML(v.Config, "  "); c != "" {
				fmt.Fprintf(w, "\nConfig of version %d:\n%s", v.Version, c)
			}
		}
	}
	return nil
}

// renderVersions is the table of a plan's versions; current is marked, and
// messages are cut as cutFor says.
func renderVersions(w io.Writer, vs []client.PlanVersion, current int64, at time.Time) error {
	cut := cutFor(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "VERSION\tCURRENT\tAGE\tBY\tMESSAGE")
	for _, v := range vs {
		mark := ""
		if v.Version == current {
			mark = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", v.Version, mark, age(at.Sub(v.CreatedAt)), v.CreatedBy, cut(v.Message, 80))
	}
	return tw.Flush()
}

// renderVersion shows one version and its config.
func renderVersion(w io.Writer, v client.PlanVersion, at time.Time) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "Plan:\t%s\n", v.Plan)
	fmt.Fprintf(tw, "Version:\t%d\n", v.Version)
	if v.Message != "" {
		fmt.Fprintf(tw, "Message:\t%s\n", v.Message)
	}
	if !v.CreatedAt.IsZero() {
		fmt.Fprintf(tw, "Published:\t%s\n", when(v.CreatedAt, at)+by(v.CreatedBy))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c := indentedYAML(v.Config, "  "); c != "" {
		fmt.Fprintf(w, "Config:\n%s", c)
	}
	return nil
}

// indented writes to w with each line indented.
type indented struct {
	w       io.Writer
	indent  string
	midLine bool
}

func (i *indented) Write(p []byte) (int, error) {
	var out []byte
	for _, b := range p {
		if !i.midLine {
			out = append(out, i.indent...)
		}
		out = append(out, b)
		i.midLine = b != '\n'
	}
	if _, err := i.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
