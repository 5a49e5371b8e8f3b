package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// maxNames is how many tenants a line of names shows before "and N more".
const maxNames = 10

// names is a list of names for a line: the first maxNames, then how many
// more.
func names(ns []string) string {
	if len(ns) <= maxNames {
		return strings.Join(ns, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ns[:maxNames], ", "), len(ns)-maxNames)
}

// versionsCell is a rollout's versions: "1 → 2", or "* → 2" when it takes
// every version but its target.
func versionsCell(from, to int64) string {
	if from == 0 {
		return fmt.Sprintf("* → %d", to)
	}
	return fmt.Sprintf("%d → %d", from, to)
}

// plural is n and the noun, plural unless n is 1: "1 tenant", "3 tenants".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// renderFleetPlan shows what a rollout would do: per wave, per tenant, its
// versions, the provider's action and the changes of its effective config;
// then the tenants it leaves alone and those out of their maintenance
// windows.
func renderFleetPlan(w io.Writer, fp client.FleetPlan, at time.Time) error {
	from := ""
	if fp.FromVersion != 0 {
		from = fmt.Sprintf(" from version %d", fp.FromVersion)
	}
	to := fmt.Sprintf("to version %d", fp.ToVersion)
	if fp.ToPlan != "" {
		to = fmt.Sprintf("moved to plan %s (%s) version %d", fp.ToPlan, fp.ToProvider, fp.ToVersion)
	}
	fmt.Fprintf(w, "Rollout of plan %s (%s)%s %s: %s in %s", fp.Plan, fp.Provider, from, to,
		plural(fp.Counts.Tenants, "tenant"), plural(len(fp.Waves), "wave"))
	var actions []string
	for _, a := range []string{client.ActionMove, client.ActionReplace, client.ActionInPlace, client.ActionNone} {
		if n := fp.Counts.Actions[a]; n > 0 {
			actions = append(actions, fmt.Sprintf("%d %s", n, a))
		}
	}
	if len(actions) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(actions, ", "))
	}
	fmt.Fprintln(w)

	// One alignment for every wave's rows.
	var nameW, versionW, actionW int
	for _, wv := range fp.Waves {
		for _, t := range wv.Tenants {
			nameW = max(nameW, len([]rune(t.Name)))
			versionW = max(versionW, len([]rune(versionsCell(t.FromVersion, t.ToVersion))))
			actionW = max(actionW, len(t.Action))
		}
	}
	var outOfWindow []string
	shown := map[string]string{} // the first tenant shown with each diff
	for i, wv := range fp.Waves {
		fmt.Fprintf(w, "\nWave %d of %d, %s: %s\n", i+1, len(fp.Waves), wv.Name, plural(wv.Size, "tenant"))
		if len(wv.Tenants) == 0 {
			fmt.Fprintln(w, "  (no tenants)")
		}
		for _, t := range wv.Tenants {
			lines := diffLines(fp.DiffOf(t), shown[t.Diff])
			if _, ok := shown[t.Diff]; !ok && t.Diff != "" {
				shown[t.Diff] = t.Name
			}
			if !t.WindowOpen {
				outOfWindow = append(outOfWindow, t.Name)
				opens := "its window never opens"
				if t.WindowOpensAt != nil {
					opens = fmt.Sprintf("opens %s (in %s)", t.WindowOpensAt.UTC().Format(time.RFC3339), age(t.WindowOpensAt.Sub(at)))
				}
				lines = append(lines, "waits for its maintenance window: "+opens)
			}
			for j, l := range lines {
				name, versions, action := t.Name, versionsCell(t.FromVersion, t.ToVersion), t.Action
				if j > 0 {
					name, versions, action = "", "", ""
				}
				fmt.Fprintf(w, "  %-*s  %-*s  %-*s  %s\n", nameW, name, versionW, versions, actionW, action, l)
			}
		}
	}

	fmt.Fprintln(w)
	pinned := make([]string, len(fp.Pinned))
	for i, t := range fp.Pinned {
		pinned[i] = fmt.Sprintf("%s@%d", t.Name, t.Version)
	}
	current := make([]string, len(fp.Current))
	for i, t := range fp.Current {
		current[i] = t.Name
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "Pinned:\t%s\n", namedCount(fp.Counts.Pinned, pinned, "rollouts leave pinned tenants alone"))
	already := fmt.Sprintf("left alone, already on version %d", fp.ToVersion)
	if fp.FromVersion != 0 {
		already = fmt.Sprintf("left alone, on version %d or not on version %d", fp.ToVersion, fp.FromVersion)
	}
	fmt.Fprintf(tw, "Current:\t%s\n", namedCount(fp.Counts.Current, current, already))
	fmt.Fprintf(tw, "Out of window:\t%s\n", namedCount(fp.Counts.OutOfWindow, outOfWindow, "each is changed when its maintenance window opens"))
	return tw.Flush()
}

// namedCount is n, then the names and why when there are any: "2 (a, b):
// why".
func namedCount(n int, ns []string, why string) string {
	if len(ns) == 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d (%s): %s", n, names(ns), why)
}

// maxInlineChanges is how many changes a diff may have to be shown again
// at each of its tenants; a longer one is shown at its first tenant, and
// the others refer to it.
const maxInlineChanges = 3

// diffLines are the lines of a tenant's changes, d (nil: none); first
// names the tenant that showed d already, if one did.
func diffLines(d *client.FleetPlanDiff, first string) []string {
	if d == nil {
		return []string{"no change to its config"}
	}
	n := len(d.Changes) + d.ChangesOmitted
	if first != "" && n > maxInlineChanges {
		return []string{fmt.Sprintf("the %d changes shown at %s", n, first)}
	}
	lines := make([]string, 0, len(d.Changes)+1)
	for _, c := range d.Changes {
		lines = append(lines, changeText(c))
	}
	switch {
	case len(d.Changes) == 0 && d.ChangesOmitted > 0:
		lines = append(lines, fmt.Sprintf("%s, not listed: the fleet plan's changes were too long to list them all", plural(d.ChangesOmitted, "change")))
	case d.ChangesOmitted > 0:
		lines = append(lines, fmt.Sprintf("and %d more, not listed", d.ChangesOmitted))
	}
	return lines
}

// changeText is one change of a tenant's effective config.
func changeText(c client.ConfigChange) string {
	switch {
	case c.From == "" && c.To == "":
		return c.Field + ": changes"
	case c.From == "":
		return fmt.Sprintf("%s: (none) → %s", c.Field, c.To)
	case c.To == "":
		return fmt.Sprintf("%s: %s → (none)", c.Field, c.From)
	}
	return fmt.Sprintf("%s: %s → %s", c.Field, c.From, c.To)
}

// memberStates are the states of a rollout's members, in the order the
// tables show them.
var memberStates = []string{client.MemberPending, client.MemberChanging, client.MemberDone, client.MemberFailed,
	client.MemberSkipped, client.MemberRolledBack}

// total is the sum of counts.
func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// finished reports whether a rollout is over: completed or aborted.
func finished(ro client.Rollout) bool {
	return ro.State == client.RolloutCompleted || ro.State == client.RolloutAborted
}

// stateText is where a rollout stands, in words, and how many of its
// tenants are done: "running: wave 2 of 3 (thirty); 1 of 10 done".
func stateText(ro client.Rollout) string {
	wave := ""
	if ro.Wave < len(ro.Waves) {
		wave = fmt.Sprintf("wave %d of %d (%s)", ro.Wave+1, len(ro.Waves), ro.Waves[ro.Wave].Name)
	}
	var s string
	switch ro.State {
	case client.RolloutRunning:
		s = "running: " + wave
		if wave == "" {
			s = "running: finishing"
		}
	case client.RolloutPaused, client.RolloutHalted:
		s = ro.State + " at " + wave
	case client.RolloutAborting:
		s = "aborting: moving the tenants it changed back"
	case client.RolloutAborted:
		s = "aborted"
		if ro.Rollback {
			s += ", its changes rolled back"
		}
	default:
		s = ro.State
	}
	s += fmt.Sprintf("; %d of %d done", ro.Counts[client.MemberDone], total(ro.Counts))
	if n := ro.Counts[client.MemberFailed]; n > 0 {
		s += fmt.Sprintf(", %d failed", n)
	}
	if n := ro.Counts[client.MemberRolledBack]; n > 0 {
		s += fmt.Sprintf(", %d rolled back", n)
	}
	return s
}

// waveStatus is where wave i of a rollout stands. A baking wave says when
// its bake ends: relative says how long from at, else at what time (a
// line that does not change every minute).
func waveStatus(ro client.Rollout, i int, at time.Time, relative bool) string {
	switch {
	case ro.State == client.RolloutCompleted || i < ro.Wave:
		return "done"
	case i > ro.Wave && ro.State == client.RolloutAborted:
		return "not started"
	case i > ro.Wave:
		return "next"
	}
	switch ro.State {
	case client.RolloutRunning:
		if ro.BakeFrom == nil {
			return "in progress"
		}
		bake, err := time.ParseDuration(ro.Bake)
		if err != nil || bake == 0 {
			return "baking"
		}
		end := ro.BakeFrom.Add(bake)
		if relative {
			return fmt.Sprintf("baking, %s left", age(end.Sub(at)))
		}
		return "baking until " + end.UTC().Format(time.RFC3339)
	case client.RolloutAborting:
		return "rolling back"
	}
	return ro.State
}

// countsText is a wave's members by state in words: "1 of 3 done, 2
// changing".
func countsText(counts map[string]int, size int) string {
	parts := []string{fmt.Sprintf("%d of %d done", counts[client.MemberDone], size)}
	for _, st := range memberStates {
		if n := counts[st]; n > 0 && st != client.MemberDone {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ReplaceAll(st, "_", " ")))
		}
	}
	return strings.Join(parts, ", ")
}

// durationText is a duration as the API writes it ("10m0s") as people do
// ("10m"); none for 0.
func durationText(s string) string {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return s
	case d == 0:
		return "none"
	}
	out := d.String()
	if strings.HasSuffix(out, "m0s") {
		out = strings.TrimSuffix(out, "0s")
	}
	if strings.HasSuffix(out, "h0m") {
		out = strings.TrimSuffix(out, "0m")
	}
	return out
}

// renderRollout shows a rollout: its fields, its waves with their members
// by state, the tenants that failed and those waiting for their windows.
func renderRollout(w io.Writer, ro client.Rollout, at time.Time) error {
	tw := newTable(w)
	row := fieldRows(tw)
	row("ID", ro.ID)
	row("Plan", ro.Plan)
	versions := versionsCell(ro.FromVersion, ro.ToVersion)
	switch {
	case ro.ToPlan != "" && ro.FromVersion == 0:
		versions = fmt.Sprintf("every version → %d of plan %s", ro.ToVersion, ro.ToPlan)
	case ro.ToPlan != "":
		versions += " of plan " + ro.ToPlan
	case ro.FromVersion == 0:
		versions += fmt.Sprintf(" (every version but %d)", ro.ToVersion)
	}
	if ro.ToPlan != "" {
		row("Moves to", fmt.Sprintf("plan %s on %s (make-before-break)", ro.ToPlan, ro.ToProvider))
	}
	row("Versions", versions)
	row("State", stateText(ro))
	row("Message", ro.Message)
	row("Bake", durationText(ro.Bake))
	row("Max failures", fmt.Sprint(ro.MaxFailures))
	row("Deadline", durationText(ro.Deadline))
	if !ro.CreatedAt.IsZero() {
		row("Created", when(ro.CreatedAt, at)+by(ro.CreatedBy))
	}
	if !ro.UpdatedAt.IsZero() {
		row("Updated", when(ro.UpdatedAt, at))
	}
	if ro.FinishedAt != nil {
		row("Finished", when(*ro.FinishedAt, at))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "WAVE\tSIZE\tPENDING\tCHANGING\tDONE\tFAILED\tSKIPPED\tROLLED BACK\tSTATUS")
	for i, wv := range ro.Waves {
		fmt.Fprintf(tw, "%s\t%d", wv.Name, wv.Size)
		for _, st := range memberStates {
			fmt.Fprintf(tw, "\t%d", wv.Counts[st])
		}
		fmt.Fprintf(tw, "\t%s\n", waveStatus(ro, i, at, true))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(ro.Failed) > 0 || len(ro.Waiting) > 0 {
		fmt.Fprintln(w)
	}
	if len(ro.Failed) > 0 {
		fmt.Fprintf(w, "Failed (%d): %s\n", len(ro.Failed), names(ro.Failed))
	}
	if len(ro.Waiting) > 0 {
		fmt.Fprintf(w, "Waiting for their maintenance windows (%d): %s\n", len(ro.Waiting), waitingText(ro.Waiting, at))
	}
	return nil
}

// waitingText names the tenants waiting for their windows, and when each
// window opens.
func waitingText(ws []client.WaitingTenant, at time.Time) string {
	ns := make([]string, len(ws))
	for i, t := range ws {
		ns[i] = t.TenantName
		if t.OpensAt != nil {
			ns[i] += fmt.Sprintf(" (opens in %s)", age(t.OpensAt.Sub(at)))
		}
	}
	return names(ns)
}

// renderRollouts is the rollout list table.
func renderRollouts(w io.Writer, rs []client.Rollout, at time.Time) error {
	tw := newTable(w)
	cut := cutFor(w)
	fmt.Fprintln(tw, "ID\tPLAN\tVERSIONS\tSTATE\tWAVE\tDONE\tAGE\tMESSAGE")
	for _, ro := range rs {
		wave := "-"
		if ro.Wave < len(ro.Waves) && !finished(ro) {
			wave = fmt.Sprintf("%d/%d %s", ro.Wave+1, len(ro.Waves), ro.Waves[ro.Wave].Name)
		}
		done := fmt.Sprintf("%d/%d", ro.Counts[client.MemberDone], total(ro.Counts))
		if n := ro.Counts[client.MemberFailed]; n > 0 {
			done += fmt.Sprintf(", %d failed", n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ro.ID, ro.Plan, versionsCell(ro.FromVersion, ro.ToVersion), ro.State, wave, done,
			age(at.Sub(ro.CreatedAt)), cut(ro.Message, 80))
	}
	return tw.Flush()
}
