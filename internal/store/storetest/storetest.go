package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Opener returns a new, empty store for one test. The store is closed by the
// suite.
type Opener func(t *testing.T) tenant.Store

// Run checks every contract of tenant.Store against the stores open returns,
// each check on a fresh store.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s tenant.Store)
	}{
		{"CreateAndGet", testCreateAndGet},
		{"JSONFidelity", testJSONFidelity},
		{"LoneSurrogate", testLoneSurrogate},
		{"CreateRefusesInvalid", testCreateRefusesInvalid},
		{"NameTaken", testNameTaken},
		{"NameTakenConcurrently", testNameTakenConcurrently},
		{"NameReuseAfterDelete", testNameReuseAfterDelete},
		{"GetNotFound", testGetNotFound},
		{"UpdateDesired", testUpdateDesired},
		{"UpdateDesiredConcurrently", testUpdateDesiredConcurrently},
		{"ObservedNeverClobbersDesired", testObservedNeverClobbersDesired},
		{"Drift", testDrift},
		{"Transitions", testTransitions},
		{"Deletion", testDeletion},
		{"ListFilters", testListFilters},
		{"Pagination", testPagination},
		{"PaginationDuringCreates", testPaginationDuringCreates},
		{"ListWork", testListWork},
		{"Events", testEvents},
		{"EventsNewest", testEventsNewest},
		{"Leases", testLeases},
		{"Fencing", testFencing},
		{"Attempts", testAttempts},
		{"Watch", testWatch},
		{"WatchOverflow", testWatchOverflow},
		{"ChangeFeed", testChangeFeed},
		{"WorkMatchesNeedsWork", testWorkMatchesNeedsWork},
		{"Idempotency", testIdempotency},
		{"IdempotencyRelease", testIdempotencyRelease},
		{"IdempotentCreateAtomic", testIdempotentCreateAtomic},
		{"IdempotencyConcurrent", testIdempotencyConcurrent},
		{"IdempotencyTakeover", testIdempotencyTakeover},
		{"CountByStatus", testCountByStatus},
		{"CountByProvider", testCountByProvider},
		{"Forget", testForget},
		{"Keys", testKeys},
		{"PlanFields", testPlanFields},
		{"Plans", testPlans},
		{"PlanVersions", testPlanVersions},
		{"PublishConcurrently", testPublishConcurrently},
		{"Rollouts", testRollouts},
		{"RolloutMembers", testRolloutMembers},
		{"RolloutEvents", testRolloutEvents},
		{"ActiveRolloutsAll", testActiveRolloutsAll},
		{"UnsettledRollouts", testUnsettledRollouts},
		{"MoveTenant", testMoveTenant},
		{"MoveTenantSkips", testMoveTenantSkips},
		{"MoveTenantAnnounces", testMoveTenantAnnounces},
		{"MoveTenantConcurrently", testMoveTenantConcurrently},
		{"FleetIdempotency", testFleetIdempotency},
		{"FleetIdempotentAtomic", testFleetIdempotentAtomic},
		{"FleetIdempotencyConcurrent", testFleetIdempotencyConcurrent},
		{"FollowChecksPlan", testFollowChecksPlan},
		{"FollowIdempotentChecksPlan", testFollowIdempotentChecksPlan},
		{"DeletePlanRacesFollowers", testDeletePlanRacesFollowers},
		{"CompletionWaitsForNewcomers", testCompletionWaitsForNewcomers},
		{"FleetMove", testFleetMove},
		{"FleetMoveCompletion", testFleetMoveCompletion},
		{"PlacementsRoundTrip", testPlacementsRoundTrip},
		{"PlacementObservations", testPlacementObservations},
		{"PlacementChanges", testPlacementChanges},
		{"PlacementProviders", testPlacementProviders},
		{"OutboxLifecycle", testOutboxLifecycle},
		{"OutboxStatuses", testOutboxStatuses},
		{"OutboxFleet", testOutboxFleet},
		{"OutboxCreates", testOutboxCreates},
		{"OutboxRead", testOutboxRead},
		{"OutboxPrune", testOutboxPrune},
		{"OutboxConcurrently", testOutboxConcurrently},
		{"Subscriptions", testSubscriptions},
		{"FanOut", testFanOut},
		{"DueDeliveries", testDueDeliveries},
		{"RecordAttempt", testRecordAttempt},
		{"DeliveriesPaging", testDeliveriesPaging},
		{"Redeliver", testRedeliver},
		{"DeliveryStats", testDeliveryStats},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.fn(t, s)
		})
	}
}

var ctx = context.Background()

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }

// newTenant is a valid tenant to create.
func newTenant(name string) *tenant.Tenant {
	return &tenant.Tenant{
		Name:          name,
		Provider:      "mock",
		ComputeConfig: json.RawMessage(`{"image":"example.com/app:1","ports":[{"container_port":8080}]}`),
		Labels:        map[string]string{"tier": "gold"},
		Annotations:   map[string]string{"owner": "team-a@example.com"},
	}
}

func mustCreate(t *testing.T, s tenant.Store, in *tenant.Tenant) *tenant.Tenant {
	t.Helper()
	out, err := s.Create(ctx, in, "test")
	if err != nil {
		t.Fatalf("Create(%s): %v", in.Name, err)
	}
	return out
}

func mustGet(t *testing.T, s tenant.Store, idOrName string) *tenant.Tenant {
	t.Helper()
	out, err := s.Get(ctx, idOrName, tenant.GetOptions{})
	if err != nil {
		t.Fatalf("Get(%s): %v", idOrName, err)
	}
	return out
}

func mustObserve(t *testing.T, s tenant.Store, cur *tenant.Tenant, status tenant.Status) *tenant.Tenant {
	t.Helper()
	out, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Status: status, Settles: status.Settled(), Actor: "controller"})
	if err != nil {
		t.Fatalf("UpdateObserved(%s → %s): %v", cur.Status, status, err)
	}
	return out
}

// mustDelete takes a tenant through deletion to deleted.
func mustDelete(t *testing.T, s tenant.Store, cur *tenant.Tenant) *tenant.Tenant {
	t.Helper()
	d, err := s.RequestDeletion(ctx, cur.ID, 0, "test")
	if err != nil {
		t.Fatalf("RequestDeletion: %v", err)
	}
	return mustObserve(t, s, d, tenant.StatusDeleted)
}

func mustEvents(t *testing.T, s tenant.Store, id string) []tenant.Event {
	t.Helper()
	var all []tenant.Event
	opts := tenant.EventListOptions{PageSize: tenant.MaxPageSize}
	for {
		page, err := s.ListEvents(ctx, id, opts)
		if err != nil {
			t.Fatalf("ListEvents(%s): %v", id, err)
		}
		all = append(all, page.Events...)
		if page.NextPageToken == "" {
			return all
		}
		opts.PageToken = page.NextPageToken
	}
}

// listAll pages through a listing.
func listAll(t *testing.T, s tenant.Store, opts tenant.ListOptions) []*tenant.Tenant {
	t.Helper()
	var all []*tenant.Tenant
	for range 100000 {
		page, err := s.List(ctx, opts)
		if err != nil {
			t.Fatalf("List(%+v): %v", opts, err)
		}
		all = append(all, page.Tenants...)
		if page.NextPageToken == "" {
			return all
		}
		opts.PageToken = page.NextPageToken
	}
	t.Fatal("List never ended")
	return nil
}

func names(ts []*tenant.Tenant) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s = %v, want an error wrapping %v", what, err, want)
	}
}

// sameJSON compares documents by meaning: key order, whitespace, escapes and
// the spelling of numbers do not matter; values do.
func sameJSON(a, b []byte) bool {
	ca, errA := canonical(a)
	cb, errB := canonical(b)
	return errA == nil && errB == nil && bytes.Equal(ca, cb)
}

func canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(normalNumbers(v))
}

func normalNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(v.String())
		if !ok {
			return v.String()
		}
		return "n:" + r.RatString()
	case map[string]any:
		for k, c := range v {
			v[k] = normalNumbers(c)
		}
	case []any:
		for i, c := range v {
			v[i] = normalNumbers(c)
		}
	}
	return v
}

// tenantCmp compares tenants as a store returns them: JSON (the
// placements' configs) by meaning, since PostgreSQL respells it; empty
// maps and slices as nil ones; and not what a placement keeps of the text
// it was read from (which only the store that read it knows).
var tenantCmp = cmp.Options{
	cmpopts.EquateEmpty(),
	cmpopts.IgnoreUnexported(tenant.Placement{}),
	// Not both empty: those EquateEmpty compares.
	cmp.FilterValues(func(a, b json.RawMessage) bool { return len(a) > 0 || len(b) > 0 },
		cmp.Comparer(func(a, b json.RawMessage) bool { return sameJSON(a, b) })),
}

func sameTenant(t *testing.T, what string, got, want *tenant.Tenant) {
	t.Helper()
	if !sameJSON(got.ComputeConfig, want.ComputeConfig) {
		t.Errorf("%s: compute_config = %s, want %s", what, got.ComputeConfig, want.ComputeConfig)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(tenant.Tenant{}, "ComputeConfig"), tenantCmp); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}
