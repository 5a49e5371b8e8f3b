package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// waveHelp describes --wave, in the help of rollout plan and start.
const waveHelp = `--wave describes a wave; repeat it for each, in order. Its value is a
comma-separated list of KEY=VALUE:
  name=NAME            the wave's name (default wave-1, wave-2, …)
  selector=LABEL=VALUE only tenants with this label (repeat it for more
                       labels: a tenant must have all)
  count=N              at most N tenants
  percent=P            at most P% of the rollout's tenants, rounded up (30 or
                       30%); count and percent are not given together
  max-in-flight=N      at most N of the wave's tenants changing at once
                       (default all of them)
Each wave takes, from the tenants no earlier wave took, those its selector
matches, up to its count or percent. The tenants no wave takes form a last
wave of their own, "rest". Without --wave, every tenant is in "rest". A
rollout has at most 100 waves.

--waves-of P splits the rollout into waves of P% each, in tenant order:
--waves-of 10 is ten waves of 10% (wave-1 … wave-10), as many --wave
percent=10. It is given instead of --wave.

A wave starts when every tenant of the one before is ready at the new
version and has stayed so for --bake. A tenant that is not ready within
--deadline of its change has failed; when more than --max-failures (default
0) have failed, the rollout halts until someone resumes or aborts it.
Maintenance windows are kept: a tenant whose window is closed waits for it.`

// waveKeys are the keys of a --wave value, as the help and errors list them.
var waveKeys = []string{"name", "selector", "count", "percent", "max-in-flight"}

// rolloutSpecFlags are the flags of rollout plan and start that make a
// rollout's request.
type rolloutSpecFlags struct {
	to, from       int64
	toPlan         string
	waves          []string
	wavesOf        int
	bake, deadline time.Duration
	maxFailures    int
}

func addRolloutSpecFlags(cmd *cobra.Command) *rolloutSpecFlags {
	f := &rolloutSpecFlags{}
	fs := cmd.Flags()
	fs.Int64Var(&f.to, "to", 0, "the version to move tenants to (default the plan's latest)")
	fs.Int64Var(&f.from, "from", 0, "move only the tenants on this version (default every version but --to)")
	fs.StringVar(&f.toPlan, "to-plan", "", "a fleet move: move the tenants to this plan, on its provider, make-before-break (--to is then its version)")
	fs.StringArrayVar(&f.waves, "wave", nil, "a wave, as name=N,selector=LABEL=VALUE,count=N|percent=P,max-in-flight=N (repeatable, in order; see above)")
	fs.IntVar(&f.wavesOf, "waves-of", 0, "waves of this percent of the tenants each, until every tenant is in one (instead of --wave)")
	cmd.MarkFlagsMutuallyExclusive("wave", "waves-of")
	fs.DurationVar(&f.bake, "bake", 0, "how long a wave's tenants must stay ready before the next wave starts")
	fs.IntVar(&f.maxFailures, "max-failures", 0, "the failure budget: halt when more tenants than this have failed")
	fs.DurationVar(&f.deadline, "deadline", 0, "how long a changed tenant has to become ready before it counts as failed (default the server's, 15m)")
	return f
}

// request reads the flags into the request for plan, reporting every
// problem at once.
func (f *rolloutSpecFlags) request(cmd *cobra.Command, plan string) (client.CreateRolloutRequest, error) {
	req := client.CreateRolloutRequest{Plan: plan, FromVersion: f.from, ToVersion: f.to, ToPlan: f.toPlan, MaxFailures: f.maxFailures}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	fs := cmd.Flags()
	if fs.Changed("to") && f.to < 1 {
		bad("--to %d: must be a version, from 1", f.to)
	}
	if fs.Changed("from") && f.from < 1 {
		bad("--from %d: must be a version, from 1 (leave it out for every version)", f.from)
	}
	if f.from != 0 && f.from == f.to && f.toPlan == "" {
		bad("--from %d: is the version the rollout moves to (--to)", f.from)
	}
	if f.maxFailures < 0 {
		bad("--max-failures %d: must be at least 0", f.maxFailures)
	}
	if f.bake < 0 {
		bad("--bake %s: must not be negative", f.bake)
	} else if f.bake > 0 {
		req.Bake = f.bake.String()
	}
	if f.deadline < 0 || fs.Changed("deadline") && f.deadline == 0 {
		bad("--deadline %s: must be positive", f.deadline)
	} else if f.deadline > 0 {
		req.Deadline = f.deadline.String()
	}
	waves, err := parseWaves(f.waves)
	if err != nil {
		errs = append(errs, err)
	}
	if fs.Changed("waves-of") {
		if waves, err = wavesOf(f.wavesOf); err != nil {
			errs = append(errs, err)
		}
	}
	req.Waves = waves
	if err := errors.Join(errs...); err != nil {
		return req, withExitCode(exitUsage, err)
	}
	return req, nil
}

// parseWaves reads the --wave values, reporting every problem of every
// value at once, one a line.
func parseWaves(values []string) ([]client.WaveSpec, error) {
	var (
		out   []client.WaveSpec
		errs  []error
		names = map[string]int{}
	)
	if len(values) > client.MaxWaves {
		// The server's limit: each --wave's problems would bury this one.
		return nil, fmt.Errorf("--wave is given %d times; a rollout has at most %d waves (the tenants no wave takes form a last wave of their own)",
			len(values), client.MaxWaves)
	}
	for i, v := range values {
		w, problems := parseWave(v)
		if w.Name != "" {
			if j, ok := names[w.Name]; ok {
				problems = append(problems, fmt.Sprintf("name %s is the name of wave %d (--wave %q)", w.Name, j+1, values[j]))
			} else {
				names[w.Name] = i
			}
		}
		if len(problems) > 0 {
			errs = append(errs, fmt.Errorf("--wave %q: %s", v, strings.Join(problems, "; ")))
		}
		out = append(out, w)
	}
	return out, errors.Join(errs...)
}

// wavesOf is --waves-of percent: waves of percent of the tenants each, as
// many as it takes for every tenant to be in one (the last may take
// fewer), named wave-1, wave-2, ….
func wavesOf(percent int) ([]client.WaveSpec, error) {
	if percent < 1 || percent > 100 {
		return nil, fmt.Errorf("--waves-of %d: must be a percent from 1 to 100", percent)
	}
	n := (100 + percent - 1) / percent
	out := make([]client.WaveSpec, n)
	for i := range out {
		out[i] = client.WaveSpec{Name: fmt.Sprintf("wave-%d", i+1), Percent: percent}
	}
	return out, nil
}

// parseWave reads one --wave value, returning every problem with it.
func parseWave(v string) (client.WaveSpec, []string) {
	var (
		w        client.WaveSpec
		problems []string
		seen     = map[string]bool{}
	)
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if strings.TrimSpace(v) == "" {
		add("is empty; give KEY=VALUE pairs, such as name=canary,selector=ring=canary,count=1")
		return w, problems
	}
	for item := range strings.SplitSeq(v, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "_", "-")
		value = strings.TrimSpace(value)
		switch {
		case strings.TrimSpace(item) == "":
			add("has an empty item (two commas, or a comma at an end)")
			continue
		case !ok:
			add("%q is not KEY=VALUE; the keys are %s", item, strings.Join(waveKeys, ", "))
			continue
		case !slices.Contains(waveKeys, key):
			add("%q is not a key of a wave; the keys are %s", key, strings.Join(waveKeys, ", "))
			continue
		case key != "selector" && seen[key]:
			add("%s is given twice", key)
			continue
		}
		seen[key] = true
		switch key {
		case "name":
			if value == "" {
				add("name is empty")
			}
			w.Name = value
		case "selector":
			label, lv, ok := strings.Cut(value, "=")
			label = strings.TrimSpace(label)
			switch {
			case !ok || label == "":
				add("selector=%s is not selector=LABEL=VALUE, such as selector=ring=canary", value)
			case hasKey(w.Selector, label):
				add("selector label %s is given twice", label)
			default:
				if w.Selector == nil {
					w.Selector = map[string]string{}
				}
				w.Selector[label] = strings.TrimSpace(lv)
			}
		case "count":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				add("count=%s: must be a whole number from 1", value)
			}
			w.Count = n
		case "percent":
			n, err := strconv.Atoi(strings.TrimSuffix(value, "%"))
			if err != nil || n < 1 || n > 100 {
				add("percent=%s: must be a whole number from 1 to 100", value)
			}
			w.Percent = n
		case "max-in-flight":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				add("max-in-flight=%s: must be a whole number from 1", value)
			}
			w.MaxInFlight = n
		}
	}
	if seen["count"] && seen["percent"] {
		add("give count or percent, not both")
	}
	return w, problems
}
