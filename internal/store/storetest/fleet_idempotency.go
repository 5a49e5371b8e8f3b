package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Conformance of fleet.IdempotencyStore: the writes of plans, versions and
// rollouts that keep the response for an Idempotency-Key in their
// transaction.

// respondFunc makes the response to a write, given the path of what it
// stored.
type respondFunc func(path string) (tenant.IdempotentResponse, error)

// respondStored is the response the API keeps for a write: 201 with its
// Location.
func respondStored(path string) (tenant.IdempotentResponse, error) {
	return tenant.IdempotentResponse{
		Status: 201,
		Header: map[string]string{"Location": path},
		Body:   fmt.Appendf(nil, `{"path":%q,"note":"ü"}`, path),
	}, nil
}

// idempotentWrite is one write of fleet.IdempotencyStore, set up on a
// store so that it can be done (once: it stores one thing each time).
type idempotentWrite struct {
	// do writes, keeping respond's response for res; it returns the path
	// of what it stored.
	do func(res tenant.IdempotentResponse, respond respondFunc) (string, error)
	// stored counts what the writes of its kind have stored.
	stored func(t *testing.T) int
	// refused is a write of its kind that the store refuses, with an
	// error wrapping refusal.
	refused func(res tenant.IdempotentResponse) error
	refusal error
}

func mustFleetIdempotencyStore(t *testing.T, s tenant.Store) fleet.IdempotencyStore {
	t.Helper()
	fi, ok := s.(fleet.IdempotencyStore)
	if !ok {
		t.Fatalf("%T does not implement fleet.IdempotencyStore", s)
	}
	return fi
}

// idempotentWrites sets up each write of fleet.IdempotencyStore on s, by
// name: creating plan standard (plan taken exists), publishing a version
// of plan p (there is no plan missing), starting a rollout of plan r with
// one member (plan busy has an active rollout).
func idempotentWrites(t *testing.T, s tenant.Store) map[string]idempotentWrite {
	t.Helper()
	f, fi := fleetStore(t, s), mustFleetIdempotencyStore(t, s)
	mustPlan(t, f, "taken")
	mustPlan(t, f, "p")
	for _, plan := range []string{"r", "busy"} {
		mustPlan(t, f, plan)
		mustPublish(t, f, plan, `{"image":"a"}`)
	}
	member := mustCreate(t, s, planTenant("member", "r", 1))
	mustRollout(t, f, "busy", 1, nil)
	count := func(t *testing.T, n int, err error) int {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	newRollout := func(plan string) *fleet.Rollout {
		return &fleet.Rollout{Spec: fleet.Spec{Plan: plan, To: 1, Waves: []fleet.Wave{{Name: "all"}}},
			Waves: []fleet.AssignedWave{{Wave: fleet.Wave{Name: "all"}, Size: 1}}, CreatedBy: "alice"}
	}
	members := []fleet.Member{{TenantID: member.ID, TenantName: member.Name, State: fleet.MemberPending, From: 1}}
	return map[string]idempotentWrite{
		"CreatePlan": {
			do: func(res tenant.IdempotentResponse, respond respondFunc) (string, error) {
				p, err := fi.CreatePlanIdempotent(ctx, &fleet.Plan{Name: "standard", Provider: "mock"}, "alice", res,
					func(p *fleet.Plan) (tenant.IdempotentResponse, error) { return respond("/v1/plans/" + p.Name) })
				if err != nil {
					return "", err
				}
				return "/v1/plans/" + p.Name, nil
			},
			stored: func(t *testing.T) int {
				ps, err := f.ListPlans(ctx)
				return count(t, len(ps), err)
			},
			refused: func(res tenant.IdempotentResponse) error {
				_, err := fi.CreatePlanIdempotent(ctx, &fleet.Plan{Name: "taken", Provider: "mock"}, "alice", res,
					func(*fleet.Plan) (tenant.IdempotentResponse, error) { return respondStored("/v1/plans/taken") })
				return err
			},
			refusal: fleet.ErrExists,
		},
		"PublishVersion": {
			do: func(res tenant.IdempotentResponse, respond respondFunc) (string, error) {
				path := func(v *fleet.Version) string { return fmt.Sprintf("/v1/plans/%s/versions/%d", v.Plan, v.Version) }
				v, err := fi.PublishVersionIdempotent(ctx, "p", json.RawMessage(`{"image":"b"}`), "b", "alice", res,
					func(v *fleet.Version) (tenant.IdempotentResponse, error) { return respond(path(v)) })
				if err != nil {
					return "", err
				}
				return path(v), nil
			},
			stored: func(t *testing.T) int {
				vs, err := f.ListVersions(ctx, "p")
				return count(t, len(vs), err)
			},
			refused: func(res tenant.IdempotentResponse) error {
				_, err := fi.PublishVersionIdempotent(ctx, "missing", json.RawMessage(`{}`), "", "alice", res,
					func(*fleet.Version) (tenant.IdempotentResponse, error) {
						return respondStored("/v1/plans/missing/versions/1")
					})
				return err
			},
			refusal: fleet.ErrNotFound,
		},
		"CreateRollout": {
			do: func(res tenant.IdempotentResponse, respond respondFunc) (string, error) {
				r, err := fi.CreateRolloutIdempotent(ctx, newRollout("r"), members, res,
					func(r *fleet.Rollout) (tenant.IdempotentResponse, error) { return respond("/v1/rollouts/" + r.ID) })
				if err != nil {
					return "", err
				}
				return "/v1/rollouts/" + r.ID, nil
			},
			stored: func(t *testing.T) int {
				rs, err := f.ListRollouts(ctx, fleet.RolloutListOptions{})
				return count(t, len(rs), err)
			},
			refused: func(res tenant.IdempotentResponse) error {
				_, err := fi.CreateRolloutIdempotent(ctx, newRollout("busy"), nil, res,
					func(*fleet.Rollout) (tenant.IdempotentResponse, error) { return respondStored("/v1/rollouts/x") })
				return err
			},
			refusal: fleet.ErrConflict,
		},
	}
}

// forEachWrite runs test on each write of fleet.IdempotencyStore, set up
// on s, in name order.
func forEachWrite(t *testing.T, s tenant.Store, test func(t *testing.T, name string, w idempotentWrite)) {
	writes := idempotentWrites(t, s)
	names := make([]string, 0, len(writes))
	for name := range writes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { test(t, name, writes[name]) })
	}
}

// A write with a reservation stores once and keeps its response; the
// reservation, completed, released or taken over, writes nothing more,
// and says so (tenant.ErrReservationLost) before what the write would
// break: the plan's name taken, the plan's active rollout.
func testFleetIdempotency(t *testing.T, s tenant.Store) {
	is := mustIdempotencyStore(t, s)
	forEachWrite(t, s, func(t *testing.T, name string, w idempotentWrite) {
		before := w.stored(t)
		res := mustReserve(t, is, "alice", name, "h", time.Hour)
		path, err := w.do(res, respondStored)
		if err != nil {
			t.Fatalf("the write: %v", err)
		}
		if n := w.stored(t); n != before+1 {
			t.Fatalf("%d stored after the write, want %d", n, before+1)
		}
		want, _ := respondStored(path)
		kept, err := is.GetIdempotent(ctx, "alice", name)
		if err != nil {
			t.Fatal(err)
		}
		if kept.Pending() || kept.Status != want.Status || kept.Token != res.Token || kept.RequestHash != "h" ||
			!cmp.Equal(want.Header, kept.Header) || string(kept.Body) != string(want.Body) || kept.CreatedAt.Before(res.CreatedAt) {
			t.Errorf("kept %+v, want %+v for reservation %s", kept, want, res.Token)
		}

		_, err = w.do(res, respondStored)
		wantErr(t, "the write again with its completed reservation", err, tenant.ErrReservationLost)

		released := mustReserve(t, is, "alice", name+"-released", "h", time.Hour)
		if err := is.ReleaseIdempotent(ctx, released); err != nil {
			t.Fatal(err)
		}
		_, err = w.do(released, respondStored)
		wantErr(t, "the write with a released reservation", err, tenant.ErrReservationLost)

		const lease = 20 * time.Millisecond
		dead := mustReserve(t, is, "alice", name+"-taken", "h", lease)
		time.Sleep(2 * lease)
		took := mustReserve(t, is, "alice", name+"-taken", "h", lease)
		_, err = w.do(dead, respondStored)
		wantErr(t, "the write with a reservation taken over", err, tenant.ErrReservationLost)
		if got, err := is.GetIdempotent(ctx, "alice", name+"-taken"); err != nil || !cmp.Equal(took, got) {
			t.Errorf("the reservation taken over is %+v, %v; want the taker's %+v", got, err, took)
		}
		if n := w.stored(t); n != before+1 {
			t.Errorf("%d stored after the writes whose reservations were lost, want %d", n, before+1)
		}
	})
}

// The write and its response are one transaction: when the response
// cannot be kept, or the write is refused, neither is stored, and the
// reservation stays as it was, to be completed later.
func testFleetIdempotentAtomic(t *testing.T, s tenant.Store) {
	is := mustIdempotencyStore(t, s)
	crash := errors.New("killed after the write")
	forEachWrite(t, s, func(t *testing.T, name string, w idempotentWrite) {
		tests := []struct {
			what  string
			write func(res tenant.IdempotentResponse) error
			want  error
		}{
			{"the response cannot be made", func(res tenant.IdempotentResponse) error {
				_, err := w.do(res, func(string) (tenant.IdempotentResponse, error) { return tenant.IdempotentResponse{}, crash })
				return err
			}, crash},
			{"the response is not one", func(res tenant.IdempotentResponse) error {
				_, err := w.do(res, func(string) (tenant.IdempotentResponse, error) {
					return tenant.IdempotentResponse{Body: []byte("{}")}, nil
				})
				return err
			}, nil},
			{"the write is refused", w.refused, w.refusal},
		}
		before := w.stored(t)
		res := mustReserve(t, is, "alice", name, "h", time.Hour)
		for _, tt := range tests {
			err := tt.write(res)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("%s: %v, want an error wrapping %v", tt.what, err, tt.want)
			}
			if n := w.stored(t); n != before {
				t.Errorf("%s: %d stored, want the %d from before", tt.what, n, before)
			}
			got, err := is.GetIdempotent(ctx, "alice", name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(res, got); diff != "" {
				t.Errorf("%s: the reservation changed (-reserved +got):\n%s", tt.what, diff)
			}
		}
		if _, err := w.do(res, respondStored); err != nil {
			t.Errorf("the write after the failures: %v", err)
		}
		if n := w.stored(t); n != before+1 {
			t.Errorf("%d stored, want %d", n, before+1)
		}
	})
}

// Writes with one reservation at once (a request and the one it was taken
// from, say): exactly one stores, the others get
// tenant.ErrReservationLost.
func testFleetIdempotencyConcurrent(t *testing.T, s tenant.Store) {
	is := mustIdempotencyStore(t, s)
	forEachWrite(t, s, func(t *testing.T, name string, w idempotentWrite) {
		before := w.stored(t)
		res := mustReserve(t, is, "alice", name, "h", time.Hour)
		paths := make([]string, writers)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() { paths[i], errs[i] = w.do(res, respondStored) })
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("writes %d and %d both stored", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, tenant.ErrReservationLost):
				t.Errorf("write %d: %v, want %v", i, err, tenant.ErrReservationLost)
			}
		}
		if winner < 0 {
			t.Fatal("no write stored")
		}
		if n := w.stored(t); n != before+1 {
			t.Errorf("%d stored, want %d", n, before+1)
		}
		if kept, err := is.GetIdempotent(ctx, "alice", name); err != nil || kept.Header["Location"] != paths[winner] {
			t.Errorf("kept %+v, %v; want the response of the write that stored %s", kept, err, paths[winner])
		}
	})
}
