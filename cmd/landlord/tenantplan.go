package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// planFlags are the flags of a tenant's plan and maintenance window, on
// create and set: --plan NAME[@VERSION], --pin, --unpin (set only) and
// --maintenance-window.
type planFlags struct {
	plan        string
	pin, unpin  bool
	windowValue string
}

// addPlanFlags adds them to cmd; onSet adds --unpin and the clearing
// values that only a change of an existing tenant has.
func addPlanFlags(cmd *cobra.Command, cf *clientFlags, onSet bool) *planFlags {
	f := &planFlags{}
	fs := cmd.Flags()
	planHelp := "follow this plan: NAME for its current version, NAME@VERSION for another"
	windowHelp := "when rollouts may change the tenant: '[DAYS] HH:MM-HH:MM [TIME_ZONE]', such as 'sat,sun 02:00-04:00 Europe/Paris'"
	if onSet {
		planHelp = "follow this plan: NAME (a new plan from its current version), NAME@VERSION; '' leaves the plan"
		windowHelp += "; '' removes it"
	}
	fs.StringVar(&f.plan, "plan", "", planHelp)
	fs.BoolVar(&f.pin, "pin", false, "pin the tenant to its plan version: rollouts leave it alone")
	fs.StringVar(&f.windowValue, "maintenance-window", "", windowHelp)
	if onSet {
		fs.BoolVar(&f.unpin, "unpin", false, "unpin the tenant: rollouts of its plan may move it again")
		cmd.MarkFlagsMutuallyExclusive("pin", "unpin")
	}
	_ = cmd.RegisterFlagCompletionFunc("plan", completePlanNames(cf))
	return f
}

// changed reports whether any of the flags was given.
func (f *planFlags) changed(cmd *cobra.Command) bool {
	for _, name := range []string{"plan", "pin", "unpin", "maintenance-window"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return true
		}
	}
	return false
}

// choice is the plan --plan and --pin ask a new tenant to follow; nil
// without --plan.
func (f *planFlags) choice(cmd *cobra.Command) (*client.PlanChoice, error) {
	if !cmd.Flags().Changed("plan") {
		if f.pin {
			return nil, withExitCode(exitUsage, errors.New("--pin needs --plan: name the plan and version to pin the tenant to, such as --plan standard@3 --pin"))
		}
		return nil, nil
	}
	name, version, err := parsePlanRef(f.plan)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, withExitCode(exitUsage, errors.New("--plan '': name the plan the tenant follows, such as --plan standard or --plan standard@3"))
	}
	return &client.PlanChoice{Name: name, Version: version, Pinned: f.pin}, nil
}

// patch is the merge patch members of the flags, for a change of an
// existing tenant: "plan" and "maintenance_window", each only when a flag
// names it. Absent members keep what the tenant has.
func (f *planFlags) patch(cmd *cobra.Command) (map[string]any, error) {
	out := map[string]any{}
	plan := map[string]any{}
	if cmd.Flags().Changed("plan") {
		name, version, err := parsePlanRef(f.plan)
		if err != nil {
			return nil, err
		}
		if name == "" {
			if f.pin || f.unpin {
				return nil, withExitCode(exitUsage, errors.New("--plan '' leaves the plan: there is no version to pin or unpin"))
			}
			out["plan"] = nil // leave the plan
		} else {
			plan["name"] = name
			if version > 0 {
				plan["version"] = version
			}
		}
	}
	if f.pin {
		plan["pinned"] = true
	}
	if f.unpin {
		plan["pinned"] = false
	}
	if len(plan) > 0 {
		out["plan"] = plan
	}
	if cmd.Flags().Changed("maintenance-window") {
		if strings.TrimSpace(f.windowValue) == "" {
			out["maintenance_window"] = nil
		} else {
			w, err := parseWindow(f.windowValue)
			if err != nil {
				return nil, err
			}
			// Every member is named: a merge patch would keep the days or
			// the time zone of the window the tenant has.
			var days any
			if len(w.Days) > 0 {
				days = w.Days
			}
			var zone any
			if w.TimeZone != "" {
				zone = w.TimeZone
			}
			out["maintenance_window"] = map[string]any{"days": days, "start": w.Start, "end": w.End, "time_zone": zone}
		}
	}
	return out, nil
}

// window is the window --maintenance-window gives a new tenant; nil
// without it.
func (f *planFlags) window(cmd *cobra.Command) (*client.MaintenanceWindow, error) {
	if !cmd.Flags().Changed("maintenance-window") {
		return nil, nil
	}
	return parseWindow(f.windowValue)
}

// parsePlanRef reads NAME[@VERSION]; version 0 when left out. "" is no
// plan.
func parsePlanRef(s string) (name string, version int64, err error) {
	name, v, hasVersion := strings.Cut(strings.TrimSpace(s), "@")
	if !hasVersion {
		return name, 0, nil
	}
	if name == "" {
		return "", 0, withExitCode(exitUsage, fmt.Errorf("--plan %q: name the plan before @, such as standard@3", s))
	}
	version, perr := strconv.ParseInt(v, 10, 64)
	if perr != nil || version < 1 {
		return "", 0, withExitCode(exitUsage, fmt.Errorf("--plan %q: the version after @ must be a number from 1, such as %s@3 (leave @ out for the plan's current version)", s, name))
	}
	return name, version, nil
}

// weekdays are the days of a maintenance window, in the week's order.
var weekdays = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// windowSyntax is how a maintenance window is written, for errors.
const windowSyntax = "write it as '[DAYS] HH:MM-HH:MM [TIME_ZONE]', such as 'sat,sun 02:00-04:00 Europe/Paris' or 'mon-fri 22:00-02:00'"

// parseWindow reads a --maintenance-window value: "[DAYS] HH:MM-HH:MM
// [TIME_ZONE]", as client.ParseWindow does, where DAYS may also hold ranges
// (mon-fri) and be in any case; "daily" or no days is every day, no time
// zone UTC. Every problem is reported at once.
func parseWindow(s string) (*client.MaintenanceWindow, error) {
	bad := func(msg string) error {
		return withExitCode(exitUsage, fmt.Errorf("--maintenance-window %q: %s", s, msg))
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, bad("is empty; " + windowSyntax)
	}
	var problems []string
	if !strings.Contains(fields[0], ":") {
		days, err := expandDays(strings.ToLower(fields[0]))
		if err != nil {
			problems = append(problems, err.Error())
		}
		fields[0] = days
	}
	if len(problems) == 0 {
		w, err := client.ParseWindow(strings.Join(fields, " "))
		if err == nil {
			return w, nil
		}
		we, ok := errors.AsType[*client.WindowError](err)
		if !ok {
			return nil, bad("is not a window; " + windowSyntax)
		}
		for _, p := range we.Problems {
			problems = append(problems, p.Message)
		}
	}
	return nil, bad(strings.Join(problems, "; "))
}

// expandDays reads a comma-separated list of days and ranges of days
// (fri-mon wraps over the week's end) into a list of days; "daily" stays.
func expandDays(s string) (string, error) {
	if s == "daily" {
		return s, nil
	}
	var out, bad []string
	for part := range strings.SplitSeq(s, ",") {
		from, to, isRange := strings.Cut(part, "-")
		i, j := dayIndex(from), dayIndex(to)
		switch {
		case !isRange && i >= 0:
			out = append(out, weekdays[i])
		case isRange && i >= 0 && j >= 0:
			for k := i; ; k = (k + 1) % 7 {
				out = append(out, weekdays[k])
				if k == j {
					break
				}
			}
		default:
			bad = append(bad, strconv.Quote(part))
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%s: not a day or a range of days: use mon, tue, wed, thu, fri, sat, sun, ranges such as mon-fri, or daily", strings.Join(bad, ", "))
	}
	// Each day once, in the week's order.
	slices.SortFunc(out, func(a, b string) int { return dayIndex(a) - dayIndex(b) })
	return strings.Join(slices.Compact(out), ","), nil
}

// dayIndex is the index of a day in weekdays, by its three letters or its
// whole name; -1 for anything else.
func dayIndex(s string) int {
	for i, d := range weekdays {
		if s == d || len(s) > 3 && strings.HasPrefix(s, d) && strings.HasPrefix(dayNames[i], s) {
			return i
		}
	}
	return -1
}

var dayNames = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// windowString is a window as people read it and --maintenance-window
// takes it.
func windowString(w *client.MaintenanceWindow) string {
	if w == nil {
		return ""
	}
	return w.String()
}

// planString is a tenant's plan as name@version, marked when pinned.
func planString(p *client.TenantPlan) string {
	if p == nil {
		return ""
	}
	s := fmt.Sprintf("%s@%d", p.Name, p.Version)
	if p.Pinned {
		s += " (pinned)"
	}
	return s
}
