package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func mustIdempotencyStore(t *testing.T, s tenant.Store) tenant.IdempotencyStore {
	t.Helper()
	is, ok := s.(tenant.IdempotencyStore)
	if !ok {
		t.Fatalf("%T does not implement tenant.IdempotencyStore", s)
	}
	return is
}

// mustReserve reserves a key that must be free.
func mustReserve(t *testing.T, is tenant.IdempotencyStore, actor, key, hash string, lease time.Duration) tenant.IdempotentResponse {
	t.Helper()
	res, fresh, err := is.ReserveIdempotent(ctx, actor, key, hash, lease)
	if err != nil || !fresh {
		t.Fatalf("ReserveIdempotent(%s, %s) = %+v, %v, %v; want a reservation", actor, key, res, fresh, err)
	}
	return res
}

// respondCreated is the response the API keeps for a create.
func respondCreated(c *tenant.Tenant) (tenant.IdempotentResponse, error) {
	return tenant.IdempotentResponse{
		Status: 201,
		Header: map[string]string{"Location": "/v1/tenants/" + c.ID, "ETag": `"1"`},
		Body:   fmt.Appendf(nil, `{"id":%q,"name":%q,"note":"ü"}`, c.ID, c.Name),
	}, nil
}

// A key is reserved, then completed with the response of the tenant it
// created; every later reservation finds that response.
func testIdempotency(t *testing.T, s tenant.Store) {
	is := mustIdempotencyStore(t, s)
	_, err := is.GetIdempotent(ctx, "alice", "key-1")
	wantErr(t, "GetIdempotent of an unknown key", err, tenant.ErrNotFound)

	res := mustReserve(t, is, "alice", "key-1", "h1", time.Hour)
	if res.Token == "" || res.CreatedAt.IsZero() || !res.Pending() || res.RequestHash != "h1" {
		t.Errorf("reservation %+v: want a token, a time, pending, h1", res)
	}
	got, err := is.GetIdempotent(ctx, "alice", "key-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res, got); diff != "" {
		t.Errorf("GetIdempotent of the reservation (-reserved +got):\n%s", diff)
	}
	// While it is pending, others find it, whatever their request.
	for _, hash := range []string{"h1", "h2"} {
		kept, fresh, err := is.ReserveIdempotent(ctx, "alice", "key-1", hash, time.Hour)
		if err != nil || fresh {
			t.Fatalf("ReserveIdempotent of a pending key (%s) = %v, %v; want the reservation", hash, fresh, err)
		}
		if diff := cmp.Diff(res, kept); diff != "" {
			t.Errorf("ReserveIdempotent of a pending key (%s) (-reserved +got):\n%s", hash, diff)
		}
	}

	created, err := is.CreateIdempotent(ctx, newTenant("acme"), "alice", res, respondCreated)
	if err != nil {
		t.Fatalf("CreateIdempotent: %v", err)
	}
	sameTenant(t, "stored tenant", mustGet(t, s, "acme"), created)
	want, _ := respondCreated(created)
	done, err := is.GetIdempotent(ctx, "alice", "key-1")
	if err != nil {
		t.Fatal(err)
	}
	if done.Pending() || done.Status != 201 || done.RequestHash != "h1" || done.Token != res.Token ||
		!cmp.Equal(want.Header, done.Header) || string(want.Body) != string(done.Body) || done.CreatedAt.Before(res.CreatedAt) {
		t.Errorf("kept response = %+v, want %+v for h1", done, want)
	}
	// The response stays; reservations return it.
	kept, fresh, err := is.ReserveIdempotent(ctx, "alice", "key-1", "h2", 0)
	if err != nil || fresh {
		t.Fatalf("ReserveIdempotent of a completed key = %v, %v", fresh, err)
	}
	if diff := cmp.Diff(done, kept); diff != "" {
		t.Errorf("ReserveIdempotent of a completed key (-kept +got):\n%s", diff)
	}
	// A completed reservation is neither completed again nor released.
	_, err = is.CreateIdempotent(ctx, newTenant("acme-2"), "alice", res, respondCreated)
	wantErr(t, "CreateIdempotent with a completed reservation", err, tenant.ErrReservationLost)
	if err := is.ReleaseIdempotent(ctx, res); err != nil {
		t.Fatal(err)
	}
	if again, err := is.GetIdempotent(ctx, "alice", "key-1"); err != nil || again.Pending() {
		t.Errorf("the response after a release of its reservation: %+v, %v", again, err)
	}

	// Keys are per actor.
	if _, err := is.GetIdempotent(ctx, "bob", "key-1"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("bob sees alice's key: %v", err)
	}
	mustReserve(t, is, "bob", "key-1", "h3", time.Hour)
}

// A released reservation frees its key; a release with another token, or of
// a key taken over, changes nothing.
func testIdempotencyRelease(t *testing.T, s tenant.Store) {
	is := mustIdempotencyStore(t, s)
	res := mustReserve(t, is, "alice", "k", "h1", time.Hour)
	other := res
	other.Token = "not-" + res.Token
	if err := is.ReleaseIdempotent(ctx, other); err != nil {
		t.Fatal(err)
	}
	if got, err := is.GetIdempotent(ctx, "alice", "k"); err != nil || got.Token != res.Token {
		t.Fatalf("after a release with another token: %+v, %v; want the reservation", got, err)
	}
	if err := is.ReleaseIdempotent(ctx, res); err != nil {
		t.Fatal(err)
	}
	_, err := is.GetIdempotent(ctx, "alice", "k")
	wantErr(t, "GetIdempotent of a released key", err, tenant.ErrNotFound)
	_, err = is.CreateIdempotent(ctx, newTenant("acme"), "alice", res, respondCreated)
	wantErr(t, "CreateIdempotent of a released reservation", err, tenant.ErrReservationLost)
	if _, err := s.Get(ctx, "acme", tenant.GetOptions{}); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("a create whose reservation was lost stored its tenant: %v", err)
	}
	// The key is free: another request, with another body, takes it.
	mustReserve(t, is, "alice", "k", "h2", time.Hour)
}

// The tenant and its response are one transaction: when either fails,
// neither is stored, and the reservation stays as it was.
func testIdempotentCreateAtomic(t *testing.T, s tenant.Store) {
	is := mustIdempotencyStore(t, s)
	mustCreate(t, s, newTenant("taken"))
	crash := errors.New("killed after the insert")
	tests := []struct {
		name    string
		tenant  string
		respond func(*tenant.Tenant) (tenant.IdempotentResponse, error)
		want    error
	}{
		{"the response cannot be made", "fresh", func(*tenant.Tenant) (tenant.IdempotentResponse, error) {
			return tenant.IdempotentResponse{}, crash
		}, crash},
		{"the response is not one", "fresh", func(*tenant.Tenant) (tenant.IdempotentResponse, error) {
			return tenant.IdempotentResponse{Body: []byte("{}")}, nil
		}, nil},
		{"the name is taken", "taken", respondCreated, tenant.ErrNameTaken},
		{"the tenant is invalid", "Not A Name", respondCreated, tenant.ErrInvalid},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprint("k-", i)
			res := mustReserve(t, is, "alice", key, "h", time.Hour)
			before := len(listAll(t, s, tenant.ListOptions{}))
			_, err := is.CreateIdempotent(ctx, newTenant(tt.tenant), "alice", res, tt.respond)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("CreateIdempotent = %v, want an error wrapping %v", err, tt.want)
			}
			if got := listAll(t, s, tenant.ListOptions{}); len(got) != before {
				t.Errorf("%d tenants stored, want the %d from before", len(got), before)
			}
			got, err := is.GetIdempotent(ctx, "alice", key)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(res, got); diff != "" {
				t.Errorf("the reservation changed (-reserved +got):\n%s", diff)
			}
			// It can still be completed.
			name := fmt.Sprint("later-", i)
			if _, err := is.CreateIdempotent(ctx, newTenant(name), "alice", res, respondCreated); err != nil {
				t.Errorf("CreateIdempotent after the failure: %v", err)
			}
		})
	}
}

// Of concurrent reservations of one key, exactly one gets it; the others
// find its reservation, and, once it is complete, its response.
func testIdempotencyConcurrent(t *testing.T, s tenant.Store) {
	is := mustIdempotencyStore(t, s)
	got := make([]tenant.IdempotentResponse, writers)
	fresh := make([]bool, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			got[i], fresh[i], errs[i] = is.ReserveIdempotent(ctx, "alice", "race", "h", tenant.IdempotencyLease)
		})
	}
	wg.Wait()
	winner := -1
	for i := range writers {
		switch {
		case errs[i] != nil:
			t.Fatalf("ReserveIdempotent %d: %v", i, errs[i])
		case fresh[i] && winner >= 0:
			t.Fatalf("reservations %d and %d both got the key", winner, i)
		case fresh[i]:
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no reservation got the key")
	}
	for i := range writers {
		if diff := cmp.Diff(got[winner], got[i]); diff != "" {
			t.Errorf("reservation %d found another row (-winner +got):\n%s", i, diff)
		}
	}
	if _, err := is.CreateIdempotent(ctx, newTenant("acme"), "alice", got[winner], respondCreated); err != nil {
		t.Fatal(err)
	}
	for i := range writers {
		wg.Go(func() {
			got[i], fresh[i], errs[i] = is.ReserveIdempotent(ctx, "alice", "race", "h", tenant.IdempotencyLease)
		})
	}
	wg.Wait()
	for i := range writers {
		if errs[i] != nil || fresh[i] || got[i].Status != 201 {
			t.Errorf("ReserveIdempotent %d of the completed key = %d, %v, %v; want its response", i, got[i].Status, fresh[i], errs[i])
		}
	}
}

// A reservation older than the lease (its request died) is taken over by
// exactly one of the requests that find it; the request it was taken from
// can no longer complete it, and stores nothing.
func testIdempotencyTakeover(t *testing.T, s tenant.Store) {
	is := mustIdempotencyStore(t, s)
	const lease = 50 * time.Millisecond
	dead := mustReserve(t, is, "alice", "k", "h", lease)
	// Younger than the lease, it holds.
	if _, fresh, err := is.ReserveIdempotent(ctx, "alice", "k", "h", time.Hour); err != nil || fresh {
		t.Fatalf("ReserveIdempotent of a live reservation = %v, %v", fresh, err)
	}
	time.Sleep(2 * lease)

	got := make([]tenant.IdempotentResponse, writers)
	fresh := make([]bool, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { got[i], fresh[i], errs[i] = is.ReserveIdempotent(ctx, "alice", "k", "h", lease) })
	}
	wg.Wait()
	taker := -1
	for i := range writers {
		switch {
		case errs[i] != nil:
			t.Fatalf("ReserveIdempotent %d: %v", i, errs[i])
		case fresh[i] && taker >= 0:
			t.Fatalf("takers %d and %d both got the key", taker, i)
		case fresh[i]:
			taker = i
		}
	}
	if taker < 0 {
		t.Fatal("nobody took the stale reservation over")
	}
	took := got[taker]
	if took.Token == dead.Token || !took.CreatedAt.After(dead.CreatedAt) {
		t.Errorf("the takeover kept the dead reservation's token or time: %+v", took)
	}
	for i := range writers {
		if i != taker && got[i].Token != took.Token {
			t.Errorf("request %d found token %s, want the taker's %s", i, got[i].Token, took.Token)
		}
	}

	// The request that died comes back: too late.
	_, err := is.CreateIdempotent(ctx, newTenant("acme"), "alice", dead, respondCreated)
	wantErr(t, "CreateIdempotent of a reservation taken over", err, tenant.ErrReservationLost)
	if err := is.ReleaseIdempotent(ctx, dead); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "acme", tenant.GetOptions{}); !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("the dead request's create was stored: %v", err)
	}
	created, err := is.CreateIdempotent(ctx, newTenant("acme"), "alice", took, respondCreated)
	if err != nil {
		t.Fatalf("the taker's CreateIdempotent: %v", err)
	}
	if kept, err := is.GetIdempotent(ctx, "alice", "k"); err != nil || kept.Status != 201 || kept.Token != took.Token || kept.Header["Location"] != "/v1/tenants/"+created.ID {
		t.Errorf("kept %+v, %v; want the taker's response", kept, err)
	}
	// A completed response is not taken over, however old (within the TTL).
	time.Sleep(2 * lease)
	if _, fresh, err := is.ReserveIdempotent(ctx, "alice", "k", "h", lease); err != nil || fresh {
		t.Errorf("ReserveIdempotent of a response older than the lease = %v, %v; want the response", fresh, err)
	}
}
