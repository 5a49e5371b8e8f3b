package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const writers = 20

func testNameTakenConcurrently(t *testing.T, s tenant.Store) {
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { _, errs[i] = s.Create(ctx, newTenant("contested"), fmt.Sprint("writer-", i)) })
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, tenant.ErrNameTaken):
			t.Errorf("writer %d: %v, want nil or ErrNameTaken", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d concurrent creates of one name succeeded, want exactly 1", won, writers)
	}
	if got := listAll(t, s, tenant.ListOptions{}); len(got) != 1 {
		t.Errorf("%d tenants stored, want 1", len(got))
	}
}

func testUpdateDesiredConcurrently(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, newTenant("acme"))
	results := make([]*tenant.Tenant, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			results[i], errs[i] = s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{
				Version:       cur.Version,
				ComputeConfig: json.RawMessage(fmt.Sprintf(`{"image":"example.com/app:%d","writer":%d}`, i, i)),
				Labels:        map[string]string{"writer": fmt.Sprint(i)},
				Annotations:   map[string]string{"writer": fmt.Sprint(i)},
				Actor:         fmt.Sprint("writer-", i),
			})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both succeeded from version %d", winner, i, cur.Version)
		case err == nil:
			winner = i
		case !errors.Is(err, tenant.ErrConflict):
			t.Errorf("writer %d: %v, want nil or ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no concurrent update succeeded")
	}
	got := mustGet(t, s, cur.ID)
	sameTenant(t, "stored tenant after the race", got, results[winner])
	w := fmt.Sprint(winner)
	if got.Labels["writer"] != w || got.Annotations["writer"] != w || !sameJSON(got.ComputeConfig, []byte(fmt.Sprintf(`{"image":"example.com/app:%d","writer":%d}`, winner, winner))) {
		t.Errorf("stored desired state mixes writers (winner %d): %s %v %v", winner, got.ComputeConfig, got.Labels, got.Annotations)
	}
	if got.Version != cur.Version+1 || got.Generation != cur.Generation+1 {
		t.Errorf("version %d, generation %d; want %d, %d", got.Version, got.Generation, cur.Version+1, cur.Generation+1)
	}
	if events := mustEvents(t, s, cur.ID); len(events) != 2 || events[1].Actor != "writer-"+w {
		t.Errorf("events = %+v, want created and one update by writer-%d", events, winner)
	}
}

func testPaginationDuringCreates(t *testing.T, s tenant.Store) {
	existing := map[string]bool{}
	for i := range 100 {
		existing[mustCreate(t, s, newTenant(fmt.Sprintf("before-%03d", i))).ID] = true
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := s.Create(ctx, newTenant(fmt.Sprintf("during-%04d", i)), "test"); err != nil {
				t.Errorf("concurrent Create: %v", err)
				return
			}
		}
	})
	seen := map[string]int{}
	opts := tenant.ListOptions{PageSize: 7}
	for {
		page, err := s.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range page.Tenants {
			seen[tn.ID]++
		}
		if page.NextPageToken == "" {
			break
		}
		opts.PageToken = page.NextPageToken
	}
	close(done)
	wg.Wait()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("tenant %s listed %d times", id, n)
		}
	}
	for id := range existing {
		if seen[id] != 1 {
			t.Errorf("tenant %s, which existed during the whole listing, was listed %d times", id, seen[id])
		}
	}
}
