package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// A rollout's page is live while the rollout is active, but not from the
// store's change feed: the feed announces tenants, and a rollout's own
// writes (its state, wave and bake, its members' states) are the
// driver's, made at its steps and announced to no one. So a rollout's
// stream reads the rollout through the API every rolloutPoll, as its user,
// and sends the parts of the page that changed; once the rollout has
// finished it says so and ends.

// rolloutPoll is how often a rollout's stream reads it: often enough that
// a person sees each of the driver's steps (every 2 seconds by default)
// soon after it is made, for one read of the rollout a second per open
// page, in the process.
const rolloutPoll = time.Second

// rolloutParts are the parts of a rollout's page that live updates
// replace, by template (and element id).
var rolloutParts = []string{"rollout-summary", "rollout-actions", "rollout-waves", "rollout-history"}

// rolloutFeed is what a rollout's stream has read and sent.
type rolloutFeed struct {
	id      string
	history rolloutHistory
	// sent are the parts last sent, by id.
	sent map[string]string
}

func (c *Console) rolloutStream(x *call, id string) error {
	if id == "" {
		http.Error(x.w, "follow one rollout with view=rollout&rollout=ID", http.StatusBadRequest)
		return nil
	}
	if c.ctx.Err() != nil {
		http.Error(x.w, "landlord is stopping", http.StatusServiceUnavailable)
		return nil
	}
	rc, err := openStream(x.w)
	if err != nil {
		return nil
	}
	f := &rolloutFeed{id: id, sent: map[string]string{}}
	poll := time.NewTicker(rolloutPoll)
	defer poll.Stop()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		// The first read sends the rollout as it is now, so that what
		// changed since the page's render is not missed.
		if !c.stillSignedIn(x, rc) {
			return nil
		}
		if done := c.sendRollout(x, rc, f); done {
			return nil
		}
		select {
		case <-x.r.Context().Done():
			return nil
		case <-c.ctx.Done():
			return nil
		case <-beat.C:
			if err := send(rc, x.w, ": ping\n\n"); err != nil {
				return nil
			}
		case <-poll.C:
		}
	}
}

// rolloutEnded tells a rollout's page that it has finished, or is gone:
// nothing more will change.
const rolloutEnded = "event: finished\ndata: {}\n\n"

// sendRollout reads the rollout and sends the parts of its page that
// changed since the last; done says the stream should end.
func (c *Console) sendRollout(x *call, rc *http.ResponseController, f *rolloutFeed) (done bool) {
	v, err := c.rolloutView(x, f.id, &f.history)
	apiErr, isAPI := errors.AsType[*client.Error](err)
	switch {
	case isAPI && apiErr.Status == http.StatusNotFound:
		_ = send(rc, x.w, rolloutEnded)
		return true
	case isAPI && apiErr.Status == http.StatusUnauthorized:
		_ = send(rc, x.w, signedOut)
		return true
	case err != nil:
		if x.r.Context().Err() != nil {
			return true
		}
		c.log.WarnContext(x.r.Context(), "console: live update", "rollout_id", f.id, "error", err)
		return false // the next poll tries again
	}
	u := update{ID: v.R.ID, Name: "The rollout of " + v.R.Plan, Status: v.R.State, Fragments: map[string]string{}}
	for _, part := range rolloutParts {
		html, err := c.fragment(part, v)
		if err != nil {
			c.log.ErrorContext(x.r.Context(), "console: render", "part", part, "error", err)
			return true
		}
		if f.sent[part] != html {
			u.Fragments[part], f.sent[part] = html, html
		}
	}
	if len(u.Fragments) > 0 {
		data, _ := json.Marshal(u)
		if err := send(rc, x.w, "event: rollout\ndata: "+string(data)+"\n\n"); err != nil {
			return true
		}
	}
	if !v.R.Active() {
		_ = send(rc, x.w, rolloutEnded)
		return true
	}
	return false
}
