package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// rolloutsView is the list of rollouts.
type rolloutsView struct {
	// Plan and Active are the filters; Plans the plans to choose from.
	Plan     string
	Active   bool
	Plans    []string
	Filtered bool
	Rollouts []rolloutRow
}

// rolloutRow is a rollout with the sums a row shows.
type rolloutRow struct {
	client.Rollout
	Done, Total, Failed int
}

func newRolloutRow(ro client.Rollout) rolloutRow {
	row := rolloutRow{Rollout: ro, Done: ro.Counts[client.MemberDone], Failed: ro.Counts[client.MemberFailed]}
	for _, n := range ro.Counts {
		row.Total += n
	}
	return row
}

// Active says the rollout has not finished.
func (r rolloutRow) Active() bool { return rolloutActive(r.State) }

func rolloutActive(state string) bool {
	switch state {
	case client.RolloutRunning, client.RolloutPaused, client.RolloutHalted, client.RolloutAborting:
		return true
	}
	return false
}

func (c *Console) listRollouts(x *call) error {
	q := x.r.URL.Query()
	v := rolloutsView{Plan: q.Get("plan"), Active: q.Get("active") == "true"}
	v.Filtered = v.Plan != "" || v.Active
	list, err := x.api.Rollouts().List(x.r.Context(), client.RolloutListOptions{Plan: v.Plan, Active: v.Active})
	if err != nil {
		return err
	}
	for _, ro := range list.Rollouts {
		v.Rollouts = append(v.Rollouts, newRolloutRow(ro))
	}
	plans, err := x.api.Plans().List(x.r.Context())
	if err != nil {
		return err
	}
	for _, p := range plans.Plans {
		v.Plans = append(v.Plans, p.Name)
	}
	return c.show(x, "rollouts", "Rollouts", "rollouts", v)
}

// rolloutView is a rollout's page; its parts are rendered alone for live
// updates.
type rolloutView struct {
	R rolloutRow
	// Waves are the rollout's waves with their progress.
	Waves []waveView
	// FailedMembers are the members that failed, with why.
	FailedMembers []client.RolloutMember
	// BakeUntil is when the wave in progress has baked, while it bakes.
	BakeUntil *time.Time
	// Events are the latest of its history, newest first; Older says
	// there are more.
	Events   []client.RolloutEvent
	Older    bool
	CanWrite bool
	CSRF     string
	LiveURL  string
	// Problem is why an action was refused: the rollout changed, or its
	// state does not allow it.
	Problem string
}

// WaveName is the name of the rollout's wave i, "" for none.
func (v *rolloutView) WaveName(i int) string {
	if i >= 0 && i < len(v.R.Waves) {
		return v.R.Waves[i].Name
	}
	return ""
}

// waveView is one wave of a rollout.
type waveView struct {
	client.RolloutWave
	// Number counts from 1.
	Number int
	// Current is the wave in progress.
	Current bool
	// Finished are its members no longer pending or changing.
	Finished int
	States   []stateCount
}

type stateCount struct {
	State string
	N     int
}

// memberStates are the states of a rollout's members, in the order pages
// show them.
var memberStates = []string{client.MemberPending, client.MemberChanging, client.MemberDone, client.MemberFailed, client.MemberSkipped, client.MemberRolledBack}

// statesOf lists the states with members, in memberStates' order.
func statesOf(counts map[string]int) []stateCount {
	var out []stateCount
	for _, s := range memberStates {
		if n := counts[s]; n > 0 {
			out = append(out, stateCount{s, n})
		}
	}
	return out
}

func (c *Console) rolloutPage(x *call) error {
	v, err := c.rolloutView(x, x.r.PathValue("rollout"), &rolloutHistory{})
	if err != nil {
		return err
	}
	return c.show(x, "rollout", rolloutTitle(v.R.Rollout), "rollouts", v)
}

func rolloutTitle(ro client.Rollout) string {
	if ro.ToPlan != "" {
		return fmt.Sprintf("Move of %s to %s on %s, version %d", ro.Plan, ro.ToPlan, ro.ToProvider, ro.ToVersion)
	}
	return fmt.Sprintf("Rollout of %s to version %d", ro.Plan, ro.ToVersion)
}

// rolloutView reads what a rollout's page shows; h is its history as read
// so far, which only the events after its newest are read into.
func (c *Console) rolloutView(x *call, id string, h *rolloutHistory) (*rolloutView, error) {
	ctx := x.r.Context()
	ro, err := x.api.Rollouts().Get(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &rolloutView{R: newRolloutRow(*ro), CanWrite: x.canWrite(), CSRF: x.sess.CSRF}
	if v.R.Active() {
		v.LiveURL = Prefix + "live?" + url.Values{"view": {"rollout"}, "rollout": {ro.ID}}.Encode()
	}
	for i, w := range ro.Waves {
		wv := waveView{RolloutWave: w, Number: i + 1, Current: i == ro.Wave && ro.WaveName != "" && v.R.Active(), States: statesOf(w.Counts)}
		wv.Finished = w.Size - w.Counts[client.MemberPending] - w.Counts[client.MemberChanging]
		v.Waves = append(v.Waves, wv)
	}
	if ro.BakeFrom != nil && v.R.Active() {
		if d, err := time.ParseDuration(ro.Bake); err == nil && d > 0 {
			until := ro.BakeFrom.Add(d)
			v.BakeUntil = &until
		}
	}
	if v.R.Failed > 0 {
		members, err := x.api.Rollouts().Members(ctx, ro.ID)
		if err != nil {
			return nil, err
		}
		for _, m := range members.Members {
			if m.State == client.MemberFailed {
				v.FailedMembers = append(v.FailedMembers, m)
			}
		}
	}
	if err := h.read(ctx, x.api, ro.ID); err != nil {
		return nil, err
	}
	v.Events, v.Older = h.newestFirst(), h.older
	return v, nil
}

// rolloutEventsShown is how many of a rollout's latest events its page
// shows.
const rolloutEventsShown = 100

// rolloutEventPage is how many events one call reads: the API's most.
const rolloutEventPage = client.MaxPageSize

// rolloutHistory is the latest of a rollout's events, as read so far.
//
// The API lists a rollout's events oldest first, after a seq: the first
// read pages through all of them to keep the latest, and each later read
// (a live update) asks only for those after the newest it has.
type rolloutHistory struct {
	last   int64
	events []client.RolloutEvent // oldest first, at most rolloutEventsShown
	older  bool
}

func (h *rolloutHistory) read(ctx context.Context, api *client.Client, id string) error {
	for {
		page, err := api.Rollouts().Events(ctx, id, h.last, rolloutEventPage)
		if err != nil {
			return err
		}
		h.events = append(h.events, page.Events...)
		if n := len(h.events) - rolloutEventsShown; n > 0 {
			h.events, h.older = slices.Delete(h.events, 0, n), true
		}
		if len(page.Events) > 0 {
			h.last = page.Events[len(page.Events)-1].Seq
		}
		if len(page.Events) < rolloutEventPage {
			return nil
		}
	}
}

func (h *rolloutHistory) newestFirst() []client.RolloutEvent {
	out := slices.Clone(h.events)
	slices.Reverse(out)
	return out
}

// rolloutAction is a button of a rollout's page.
type rolloutAction struct {
	// verb says what was refused: "paused", "resumed", "aborted".
	verb string
	do   func(ctx context.Context, api *client.Client, id string, opts client.ActionOptions, form url.Values) error
}

var rolloutActions = map[string]rolloutAction{
	"pause": {"paused", func(ctx context.Context, api *client.Client, id string, opts client.ActionOptions, _ url.Values) error {
		_, err := api.Rollouts().Pause(ctx, id, opts)
		return err
	}},
	"resume": {"resumed", func(ctx context.Context, api *client.Client, id string, opts client.ActionOptions, _ url.Values) error {
		_, err := api.Rollouts().Resume(ctx, id, opts)
		return err
	}},
	"abort": {"aborted", func(ctx context.Context, api *client.Client, id string, opts client.ActionOptions, form url.Values) error {
		_, err := api.Rollouts().Abort(ctx, id, form.Get("rollback") == "true", opts)
		return err
	}},
}

// actOnRollout pauses, resumes or aborts a rollout, if it is still at the
// version the page showed (If-Match): a rollout that changed since, or
// whose state does not allow the action, is shown again, saying so.
func (c *Console) actOnRollout(x *call) error {
	id := x.r.PathValue("rollout")
	action, ok := rolloutActions[x.r.PathValue("action")]
	if !ok {
		return c.notFound(x)
	}
	version, err := strconv.ParseInt(x.r.PostFormValue("version"), 10, 64)
	if err != nil || version < 1 {
		c.renderError(x.w, x.r, x.sess, http.StatusBadRequest, "This form does not say which version of the rollout it was meant for: go back, reload the page and try again.")
		return nil
	}
	err = action.do(x.r.Context(), x.api, id, client.ActionOptions{IfMatch: version}, x.r.PostForm)
	apiErr, isAPI := errors.AsType[*client.Error](err)
	switch {
	case err == nil:
		http.Redirect(x.w, x.r, rolloutPath(id), http.StatusSeeOther)
		return nil
	case !isAPI || (apiErr.Status != http.StatusConflict && apiErr.Status != http.StatusPreconditionFailed):
		return err
	}
	v, err := c.rolloutView(x, id, &rolloutHistory{})
	if err != nil {
		return err
	}
	if apiErr.Status == http.StatusPreconditionFailed {
		v.Problem = fmt.Sprintf("Nothing was done: the rollout changed after this page showed it (it is now %s). Look at it again, then choose.", v.R.State)
	} else {
		v.Problem = fmt.Sprintf("The rollout could not be %s: %s", action.verb, apiErr.Problem.Detail)
	}
	return c.showStatus(x, apiErr.Status, "rollout", rolloutTitle(v.R.Rollout), "rollouts", v)
}

func rolloutPath(id string) string { return Prefix + "rollouts/" + url.PathEscape(id) }
