package main

import (
	"fmt"
	"io"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// placementIndent begins each line of a placement's fields, under its
// heading.
const placementIndent = "  "

// renderPlacement shows one placement of a tenant: a heading with its
// name, then its fields, endpoints, drift and config, indented. A
// placement being removed says so in its heading.
func renderPlacement(w io.Writer, p client.Placement, at time.Time) error {
	heading := "Placement " + p.Name + ":"
	if p.Removed {
		heading = "Placement " + p.Name + " (removed: its workload is being destroyed):"
	}
	if _, err := fmt.Fprintln(w, heading); err != nil {
		return err
	}
	tw := newTable(w)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s%s:\t%s\n", placementIndent, k, v)
		}
	}
	row("Provider", p.ComputeProvider)
	row("Status", p.Status)
	row("Message", p.StatusMessage)
	row("Workload", p.WorkloadName)
	attemptsRow(row, p.Attempts, p.RetryAt, at)
	endpointRows(tw, placementIndent, p.Endpoints)
	driftRows(tw, placementIndent, p.Drift, at)
	if err := tw.Flush(); err != nil {
		return err
	}
	if c := indentedYAML(p.ComputeConfig, placementIndent+"  "); c != "" {
		fmt.Fprintf(w, "%sCompute config:\n%s", placementIndent, c)
	}
	if c := indentedYAML(p.EffectiveConfig, placementIndent+"  "); c != "" {
		fmt.Fprintf(w, "%sEffective config:\n%s", placementIndent, c)
	}
	return nil
}
