package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// An observation its group hands back to its caller (a second call for one
// tenant, a group whose transaction failed) is written by change, which
// announces it to change feeds as the group would have.
func TestChangesAnnouncesObservationWrittenAlone(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := s.Changes(fctx)
	if err != nil {
		t.Fatal(err)
	}
	cur := mustCreate(t, s, "alone")
	if got := nextAnnouncement(t, ch); got != cur.ID {
		t.Fatalf("announced %s, want the create of %s", got, cur.ID)
	}
	obs := tenant.Observation{Generation: cur.Generation, Status: tenant.StatusProvisioning, Actor: "controller"}
	if _, err := s.answer(&pendingObservation{ctx: ctx, id: cur.ID, obs: obs}, writeAlone); err != nil {
		t.Fatal(err)
	}
	if got := nextAnnouncement(t, ch); got != cur.ID {
		t.Fatalf("announced %q, want the observation of %s written alone", got, cur.ID)
	}
}

// A payload that a notification could not hold is empty: listeners hear
// that announcements were lost rather than the write failing.
func TestChangedPayload(t *testing.T) {
	id := strings.Repeat("a", idLen)
	group := make([]string, maxGroup)
	for i := range group {
		group[i] = id
	}
	if got := changedPayload(group); got != strings.Join(group, ",") {
		t.Errorf("the payload of a group of %d ids was cut: %d bytes", maxGroup, len(got))
	}
	if got := changedPayload([]string{strings.Repeat("a", maxPayload+1)}); got != "" {
		t.Errorf("a payload of %d bytes = %d bytes, want empty", maxPayload+1, len(got))
	}
}
