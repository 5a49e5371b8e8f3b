package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func testEvents(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, newTenant("acme"))
	other := mustCreate(t, s, newTenant("other"))
	at := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)
	for i := range 30 {
		e := tenant.Event{TenantID: cur.ID, Type: tenant.EventNote, Generation: 1, Message: fmt.Sprintf("note %d ✓", i), Actor: "controller"}
		if i == 0 {
			e.Time = at
		}
		if err := s.AppendEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendEvent(ctx, tenant.Event{TenantID: other.ID, Type: tenant.EventNote, Message: "other"}); err != nil {
			t.Fatal(err)
		}
	}
	var all []tenant.Event
	opts := tenant.EventListOptions{PageSize: 4}
	for {
		page, err := s.ListEvents(ctx, cur.ID, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) > 4 {
			t.Fatalf("page of %d events, asked for 4", len(page.Events))
		}
		all = append(all, page.Events...)
		if page.NextPageToken == "" {
			break
		}
		opts.PageToken = page.NextPageToken
	}
	if len(all) != 31 {
		t.Fatalf("%d events, want 31", len(all))
	}
	for i, e := range all {
		if e.TenantID != cur.ID {
			t.Errorf("event %d belongs to %s", i, e.TenantID)
		}
		if i > 0 && e.Seq <= all[i-1].Seq {
			t.Errorf("events out of order at %d: seq %d after %d", i, e.Seq, all[i-1].Seq)
		}
		if i > 0 && e.Message != fmt.Sprintf("note %d ✓", i-1) {
			t.Errorf("event %d message = %q", i, e.Message)
		}
		if e.Time.IsZero() || e.Time.Location() != time.UTC {
			t.Errorf("event %d time = %v", i, e.Time)
		}
	}
	if !all[1].Time.Equal(at.Truncate(time.Microsecond)) {
		t.Errorf("event time = %v, want %v (microseconds kept)", all[1].Time, at)
	}
	err := s.AppendEvent(ctx, tenant.Event{TenantID: cur.ID, Type: "gossip"})
	wantErr(t, "AppendEvent of an unknown type", err, tenant.ErrInvalid)
	err = s.AppendEvent(ctx, tenant.Event{TenantID: cur.ID, Type: tenant.EventStatus, To: "sleeping"})
	wantErr(t, "AppendEvent with an unknown status", err, tenant.ErrInvalid)
	err = s.AppendEvent(ctx, tenant.Event{TenantID: tenant.NewID(), Type: tenant.EventNote})
	wantErr(t, "AppendEvent for an unknown tenant", err, tenant.ErrNotFound)
	_, err = s.ListEvents(ctx, tenant.NewID(), tenant.EventListOptions{})
	wantErr(t, "ListEvents of an unknown tenant", err, tenant.ErrNotFound)
	_, err = s.ListEvents(ctx, cur.ID, tenant.EventListOptions{PageToken: "nope"})
	wantErr(t, "ListEvents with a bad token", err, tenant.ErrInvalidPageToken)
}

// testEventsNewest lists a tenant's history newest first, in pages whose
// tokens continue that order and no other.
func testEventsNewest(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, newTenant("acme"))
	other := mustCreate(t, s, newTenant("other"))
	for i := range 4 {
		for _, id := range []string{cur.ID, other.ID} {
			if err := s.AppendEvent(ctx, tenant.Event{TenantID: id, Type: tenant.EventNote, Message: fmt.Sprintf("note %d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var all []tenant.Event
	var pages int
	oldest := ""
	opts := tenant.EventListOptions{PageSize: 2, Newest: true}
	for {
		page, err := s.ListEvents(ctx, cur.ID, opts)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.Events) > 2 {
			t.Fatalf("page of %d events, asked for 2", len(page.Events))
		}
		all = append(all, page.Events...)
		if page.NextPageToken == "" {
			break
		}
		if pages > 5 {
			t.Fatal("newest-first pages do not end")
		}
		if oldest == "" {
			// A token of this order continues no oldest-first listing.
			_, err := s.ListEvents(ctx, cur.ID, tenant.EventListOptions{PageToken: page.NextPageToken})
			wantErr(t, "oldest-first ListEvents with a newest-first token", err, tenant.ErrInvalidPageToken)
			first, err := s.ListEvents(ctx, cur.ID, tenant.EventListOptions{PageSize: 2})
			if err != nil {
				t.Fatal(err)
			}
			oldest = first.NextPageToken
		}
		opts.PageToken = page.NextPageToken
	}
	if pages != 3 || len(all) != 5 {
		t.Fatalf("%d events in %d pages, want 5 in 3", len(all), pages)
	}
	for i, e := range all {
		if e.TenantID != cur.ID {
			t.Errorf("event %d belongs to %s", i, e.TenantID)
		}
		if i > 0 && e.Seq >= all[i-1].Seq {
			t.Errorf("events not newest first at %d: seq %d after %d", i, e.Seq, all[i-1].Seq)
		}
		if want := fmt.Sprintf("note %d", 3-i); i < 4 && e.Message != want {
			t.Errorf("event %d message = %q, want %q", i, e.Message, want)
		}
	}
	if all[4].Type != tenant.EventCreated {
		t.Errorf("oldest event is %s, want %s", all[4].Type, tenant.EventCreated)
	}
	_, err := s.ListEvents(ctx, cur.ID, tenant.EventListOptions{Newest: true, PageToken: oldest})
	wantErr(t, "newest-first ListEvents with an oldest-first token", err, tenant.ErrInvalidPageToken)
	_, err = s.ListEvents(ctx, tenant.NewID(), tenant.EventListOptions{Newest: true})
	wantErr(t, "newest-first ListEvents of an unknown tenant", err, tenant.ErrNotFound)
}
