package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// SealedDB is one database, empty at first, for the checks of a store
// that seals secrets.
type SealedDB struct {
	// Open opens a store on the database that seals with sealer (none
	// when nil). The suite closes it.
	Open func(t *testing.T, sealer tenant.Sealer) tenant.Store
	// Raw returns the compute_config of tenant id as the database holds
	// it, read with SQL beside the store.
	Raw func(t *testing.T, id string) string
	// RawPlacements returns the placements column of tenant id as the
	// database holds it (tenant.PlacementsText), read as Raw reads.
	RawPlacements func(t *testing.T, id string) string
}

// RunSealed checks a store given a tenant.Sealer (a seal.Configs):
// the database holds no secret in plain text, callers see plain configs,
// a change that alters nothing writes nothing, seal.Rotate moves
// every value to a new key beside running writes, and a value sealed with
// a key that is gone is an error that names it; so are the configs of
// every placement of a tenant, and a tenant of one placement keeps its
// placements column '[]'. newDB returns a new, empty database for each
// check.
func RunSealed(t *testing.T, newDB func(t *testing.T) SealedDB) {
	tests := []struct {
		name string
		fn   func(t *testing.T, db SealedDB)
	}{
		{"NoSecretAtRest", testNoSecretAtRest},
		{"NoOpStaysNoOp", testSealedNoOp},
		{"Rotate", testRotate},
		{"RotateBesideWrites", testRotateBesideWrites},
		{"RemovedKey", testRemovedKey},
		{"PlacementSecrets", testPlacementSecrets},
		{"SimplePlacementsColumn", testSimplePlacementsColumn},
		{"MoveSecrets", testMoveSecrets},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newDB(t))
		})
	}
}

// openSealed opens db's store with configs, closing it when t ends.
func openSealed(t *testing.T, db SealedDB, configs *seal.Configs) tenant.Store {
	t.Helper()
	var sealer tenant.Sealer
	if configs != nil {
		sealer = configs
	}
	s := db.Open(t, sealer)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// sealKey is a test key named id.
func sealKey(id string) seal.Key {
	return seal.Key{ID: id, Material: bytes.Repeat([]byte(id[len(id)-1:]), seal.KeySize)}
}

// sealSchemas has the mock provider's config schema: the portable
// workload, whose secrets (of the main container and of sidecars) are
// writeOnly.
type sealSchemas struct{ mock *compute.Schema }

func (s sealSchemas) Schema(provider string) (*compute.Schema, error) {
	if provider != "mock" {
		return nil, &compute.ProviderNotFoundError{Name: provider, Enabled: []string{"mock"}}
	}
	return s.mock, nil
}

// mustConfigs is a Configs of keys whose primary key is primary.
func SealConfigs(t testing.TB, primary string, keys ...string) *seal.Configs {
	t.Helper()
	raw, err := workload.Schema("mock", nil)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := compute.CompileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	ks := make([]seal.Key, len(keys))
	for i, id := range keys {
		ks[i] = sealKey(id)
	}
	ring, err := seal.NewKeyring(primary, ks...)
	if err != nil {
		t.Fatal(err)
	}
	return seal.NewConfigs(ring, sealSchemas{schema})
}

// secretTenant is a tenant with secrets (see secretsOf) in its main
// container and a sidecar.
func SecretTenant(name string) *tenant.Tenant {
	in := newTenant(name)
	in.ComputeConfig = json.RawMessage(fmt.Sprintf(`{"image":"example.com/app:1","env":{"MODE":"plain-%[1]s"},`+
		`"secrets":{"DB_PASSWORD":"db-pw-%[1]s","API_KEY":"api-key-%[1]s"},`+
		`"sidecars":[{"name":"proxy","image":"example.com/proxy:1","secrets":{"TOKEN":"token-%[1]s"}}]}`, name))
	return in
}

// secretsOf are the secret values of SecretTenant(name).
func SecretsOf(name string) []string {
	return []string{"db-pw-" + name, "api-key-" + name, "token-" + name}
}

// checkSealed fails t when the database holds one of tenant id's secrets
// in plain text, or holds its config not sealed with key.
func checkSealed(t *testing.T, db SealedDB, id, key string, secrets ...string) {
	t.Helper()
	raw := db.Raw(t, id)
	for _, s := range secrets {
		if strings.Contains(raw, s) {
			t.Errorf("the database holds the secret %q in plain text: %s", s, raw)
		}
	}
	if want := `"llsec:v1:` + key + `:`; strings.Count(raw, want) != 3 || strings.Count(raw, "llsec:") != 3 {
		t.Errorf("tenant %s's stored config does not hold 3 values sealed with %s, and only those: %s", id, key, raw)
	}
}

// checkConfig fails t unless got is the JSON value of want.
func checkConfig(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if !sameJSON(got, want) {
		t.Errorf("%s: compute_config = %s, want %s", what, got, want)
	}
}

func testNoSecretAtRest(t *testing.T, db SealedDB) {
	s := openSealed(t, db, SealConfigs(t, "k1", "k1"))
	in := SecretTenant("acme")
	created := mustCreate(t, s, in)
	checkConfig(t, "Create", created.ComputeConfig, in.ComputeConfig)
	checkSealed(t, db, created.ID, "k1", SecretsOf("acme")...)
	if raw := db.Raw(t, created.ID); !strings.Contains(raw, "plain-acme") || !strings.Contains(raw, "example.com/app:1") {
		t.Errorf("what is not secret is not stored as it is: %s", raw)
	}
	checkConfig(t, "Get", mustGet(t, s, created.ID).ComputeConfig, in.ComputeConfig)
	page, err := s.List(ctx, tenant.ListOptions{})
	if err != nil || len(page.Tenants) != 1 {
		t.Fatalf("List = %v, %v", page, err)
	}
	checkConfig(t, "List", page.Tenants[0].ComputeConfig, in.ComputeConfig)

	// A change of a secret: the new value is sealed, the old one gone.
	next := bytes.Replace(in.ComputeConfig, []byte("db-pw-acme"), []byte("db-pw-acme-2"), 1)
	updated, err := s.UpdateDesired(ctx, created.ID, tenant.DesiredChange{Version: created.Version, ComputeConfig: next, Labels: in.Labels, Annotations: in.Annotations, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, "UpdateDesired", updated.ComputeConfig, next)
	checkSealed(t, db, created.ID, "k1", append(SecretsOf("acme"), "db-pw-acme-2")...)
	checkConfig(t, "Get after UpdateDesired", mustGet(t, s, created.ID).ComputeConfig, next)

	// Observations and deletion keep the stored values as they are.
	before := db.Raw(t, created.ID)
	ready := mustObserve(t, s, updated, tenant.StatusProvisioning)
	ready = mustObserve(t, s, ready, tenant.StatusReady)
	checkConfig(t, "UpdateObserved", ready.ComputeConfig, next)
	deleted := mustDelete(t, s, ready)
	checkConfig(t, "deleted", deleted.ComputeConfig, next)
	if after := db.Raw(t, created.ID); after != before {
		t.Errorf("observations and deletion rewrote the sealed config:\n%s\n%s", before, after)
	}

	// A create with an Idempotency-Key seals too.
	if is, ok := s.(tenant.IdempotencyStore); ok {
		res := mustReserve(t, is, "alice", "key-1", "hash", time.Minute)
		kept, err := is.CreateIdempotent(ctx, SecretTenant("beta"), "alice", res, respondCreated)
		if err != nil {
			t.Fatal(err)
		}
		checkConfig(t, "CreateIdempotent", kept.ComputeConfig, SecretTenant("beta").ComputeConfig)
		checkSealed(t, db, kept.ID, "k1", SecretsOf("beta")...)
	}

	// A config whose string would read back as sealed is refused, at its
	// pointer.
	bad := newTenant("gamma")
	bad.ComputeConfig = json.RawMessage(`{"image":"a","env":{"X":"llsec:v1:k1:AAAA"}}`)
	if _, err := s.Create(ctx, bad, "test"); !errors.Is(err, provider.ErrInvalidSpec) || !strings.Contains(err.Error(), "/env/X") {
		t.Errorf("Create of a config holding a sealed-looking string = %v, want ErrInvalidSpec at /env/X", err)
	}
}

func testSealedNoOp(t *testing.T, db SealedDB) {
	s := openSealed(t, db, SealConfigs(t, "k1", "k1"))
	in := SecretTenant("acme")
	created := mustCreate(t, s, in)
	raw := db.Raw(t, created.ID)
	// The same config, spelled otherwise: key order and white space.
	var v map[string]any
	if err := json.Unmarshal(in.ComputeConfig, &v); err != nil {
		t.Fatal(err)
	}
	respelled, _ := json.MarshalIndent(v, "", "  ")
	for _, config := range []json.RawMessage{in.ComputeConfig, respelled} {
		got, err := s.UpdateDesired(ctx, created.ID, tenant.DesiredChange{Version: created.Version, ComputeConfig: config, Labels: in.Labels, Annotations: in.Annotations, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != created.Version || got.Generation != created.Generation {
			t.Errorf("a change that alters nothing moved the tenant to version %d, generation %d", got.Version, got.Generation)
		}
		if after := db.Raw(t, created.ID); after != raw {
			t.Errorf("a change that alters nothing rewrote the sealed config:\n%s\n%s", raw, after)
		}
	}
	if page, err := s.ListEvents(ctx, created.ID, tenant.EventListOptions{}); err != nil || len(page.Events) != 1 {
		t.Errorf("events = %v, %v; want created only", page, err)
	}
}

// rotateFixture is tenants stored under k1 (one deleted) and one stored
// before encryption was on, with the plain configs each must read as.
func rotateFixture(t *testing.T, db SealedDB, n int) map[string]json.RawMessage {
	t.Helper()
	want := map[string]json.RawMessage{}
	plain := openSealed(t, db, nil)
	old := mustCreate(t, plain, SecretTenant("before"))
	want[old.ID] = old.ComputeConfig
	s := openSealed(t, db, SealConfigs(t, "k1", "k1"))
	for i := range n {
		tn := mustCreate(t, s, SecretTenant(fmt.Sprintf("t%03d", i)))
		want[tn.ID] = tn.ComputeConfig
		if i == 0 {
			mustDelete(t, s, tn)
		}
	}
	return want
}

// checkReads fails t unless s reads every tenant of want (deleted ones
// too) with its plain config.
func checkReads(t *testing.T, s tenant.Store, want map[string]json.RawMessage) {
	t.Helper()
	for id, config := range want {
		got, err := s.Get(ctx, id, tenant.GetOptions{IncludeDeleted: true})
		if err != nil {
			t.Errorf("Get(%s): %v", id, err)
			continue
		}
		checkConfig(t, "Get "+got.Name, got.ComputeConfig, config)
	}
}

func mustRewriter(t *testing.T, s tenant.Store) tenant.ConfigRewriter {
	t.Helper()
	r, ok := s.(tenant.ConfigRewriter)
	if !ok {
		t.Fatalf("%T does not implement tenant.ConfigRewriter", s)
	}
	return r
}

func testRotate(t *testing.T, db SealedDB) {
	want := rotateFixture(t, db, 7)
	both := SealConfigs(t, "k2", "k1", "k2")
	s := openSealed(t, db, both)
	// A secret stored in plain text reads as it is with a key configured.
	checkReads(t, s, want)
	before := map[string]*tenant.Tenant{}
	for id := range want {
		tn, err := s.Get(ctx, id, tenant.GetOptions{IncludeDeleted: true})
		if err != nil {
			t.Fatal(err)
		}
		before[id] = tn
	}

	stats, err := seal.Rotate(ctx, mustRewriter(t, s), both, seal.RotateOptions{DryRun: true, BatchSize: 3})
	if err != nil || stats.Tenants != 8 || stats.Rewritten != 8 || stats.Resealed != 21 || stats.Sealed != 3 {
		t.Errorf("dry run = %+v, %v; want 8 tenants, 21 values resealed, 3 sealed", stats, err)
	}
	for id := range want {
		if raw := db.Raw(t, id); strings.Contains(raw, ":k2:") {
			t.Fatalf("the dry run wrote: %s", raw)
		}
	}

	stats, err = seal.Rotate(ctx, mustRewriter(t, s), both, seal.RotateOptions{BatchSize: 3})
	if err != nil || stats.Tenants != 8 || stats.Rewritten != 8 || stats.Resealed != 21 || stats.Sealed != 3 || stats.Current != 0 || len(stats.Failed) != 0 {
		t.Fatalf("Rotate = %+v, %v; want 8 tenants rewritten, 21 values resealed, 3 sealed", stats, err)
	}
	for id, tn := range before {
		checkSealed(t, db, id, "k2", SecretsOf(tn.Name)...)
	}
	// Nothing else changed: the version a client read still updates.
	for id, tn := range before {
		after, err := s.Get(ctx, id, tenant.GetOptions{IncludeDeleted: true})
		if err != nil {
			t.Fatal(err)
		}
		checkConfig(t, "after rotation", after.ComputeConfig, tn.ComputeConfig)
		if diff := cmp.Diff(tn, after, cmpopts.IgnoreFields(tenant.Tenant{}, "ComputeConfig"), tenantCmp); diff != "" {
			t.Errorf("rotation changed tenant %s (-before +after):\n%s", tn.Name, diff)
		}
	}
	// Idempotent.
	stats, err = seal.Rotate(ctx, mustRewriter(t, s), both, seal.RotateOptions{})
	if err != nil || stats.Tenants != 8 || stats.Rewritten != 0 || stats.Current != 24 {
		t.Errorf("second Rotate = %+v, %v; want 24 values current, nothing rewritten", stats, err)
	}
	// k1 can go.
	checkReads(t, openSealed(t, db, SealConfigs(t, "k2", "k2")), want)

	// And back to plain text.
	stats, err = seal.Rotate(ctx, mustRewriter(t, s), both, seal.RotateOptions{Decrypt: true})
	if err != nil || stats.Opened != 24 || stats.Rewritten != 8 {
		t.Errorf("Rotate to plain text = %+v, %v; want 24 opened", stats, err)
	}
	for id := range want {
		if raw := db.Raw(t, id); strings.Contains(raw, "llsec:") {
			t.Errorf("decrypted config still sealed: %s", raw)
		}
	}
	checkReads(t, openSealed(t, db, nil), want)
}

// Rotation beside writers that change secrets, and beside observers that
// write a tenant back with the config it was read with (its sealed text
// kept as it is): no write is lost, and every value ends sealed with the
// new key. An observer that read a row before its batch was rotated and
// wrote it back after would put a k1 value back.
func testRotateBesideWrites(t *testing.T, db SealedDB) {
	want := rotateFixture(t, db, 20)
	both := SealConfigs(t, "k2", "k1", "k2")
	s := openSealed(t, db, both)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []error
		written = map[string]json.RawMessage{}
		start   = make(chan struct{})
		rotated = make(chan struct{})
	)
	// Observers: from the start of the rotation until its end, over and
	// over, as a controller writes status.
	for id := range want {
		wg.Go(func() {
			<-start
			for i := 0; ; i++ {
				tn, err := s.Get(ctx, id, tenant.GetOptions{})
				if errors.Is(err, tenant.ErrNotFound) {
					return // the deleted one
				}
				if err == nil {
					_, err = s.UpdateObserved(ctx, id, tenant.Observation{Generation: tn.Generation, Status: tn.Status, Message: fmt.Sprintf("observed %d", i)})
				}
				if err != nil && !errors.Is(err, tenant.ErrConflict) { // a writer's new generation
					mu.Lock()
					errs = append(errs, fmt.Errorf("observe %s: %w", id, err))
					mu.Unlock()
					return
				}
				select {
				case <-rotated:
					if i > 0 {
						return
					}
				default:
				}
			}
		})
	}
	for id := range want {
		tn, err := s.Get(ctx, id, tenant.GetOptions{})
		if errors.Is(err, tenant.ErrNotFound) {
			continue // the deleted one
		}
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			<-start
			for i := range 3 {
				next := bytes.Replace(tn.ComputeConfig, []byte(`"db-pw-`), fmt.Appendf(nil, `"db-pw-%d-`, i), 1)
				got, err := s.UpdateDesired(ctx, tn.ID, tenant.DesiredChange{Version: tn.Version, ComputeConfig: next, Labels: tn.Labels, Annotations: tn.Annotations, Actor: "test"})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					written[tn.ID] = got.ComputeConfig
				}
				mu.Unlock()
				if err != nil {
					return
				}
				tn = got
			}
		})
	}
	close(start)
	stats, err := seal.Rotate(ctx, mustRewriter(t, s), both, seal.RotateOptions{BatchSize: 4})
	close(rotated)
	wg.Wait()
	if err != nil || len(errs) > 0 || stats.Tenants != 21 {
		t.Fatalf("Rotate = %+v, %v; writes: %v", stats, err, errors.Join(errs...))
	}
	maps.Copy(want, written)
	for id := range want {
		raw := db.Raw(t, id)
		if strings.Contains(raw, ":k1:") || strings.Count(raw, "llsec:v1:k2:") != 3 {
			t.Errorf("not every value is sealed with k2: %s", raw)
		}
		for _, secret := range []string{"db-pw-", "api-key-", "token-"} {
			if strings.Contains(raw, secret) {
				t.Errorf("plain secret %s… at rest: %s", secret, raw)
			}
		}
	}
	checkReads(t, openSealed(t, db, SealConfigs(t, "k2", "k2")), want)
}

// A value sealed with a key that is no longer configured is an error that
// names the key and what to set, on every read and write of its tenant:
// never ciphertext passed on as the secret. Listings still show it.
func testRemovedKey(t *testing.T, db SealedDB) {
	created := mustCreate(t, openSealed(t, db, SealConfigs(t, "k1", "k1")), SecretTenant("acme"))
	for name, configs := range map[string]*seal.Configs{
		"another key": SealConfigs(t, "k2", "k2"),
		"no keys":     SealConfigs(t, ""),
	} {
		t.Run(name, func(t *testing.T) {
			s := openSealed(t, db, configs)
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, seal.ErrUnknownKey) || !strings.Contains(err.Error(), `"k1"`) || !strings.Contains(err.Error(), "encryption.keys") {
					t.Errorf("%s = %v, want ErrUnknownKey naming k1 and encryption.keys", what, err)
				}
			}
			_, err := s.Get(ctx, created.ID, tenant.GetOptions{})
			check("Get", err)
			// A listing shows the tenant, its secrets still sealed (the
			// API redacts them), rather than fail for every tenant.
			page, err := s.List(ctx, tenant.ListOptions{})
			if err != nil || len(page.Tenants) != 1 || strings.Count(string(page.Tenants[0].ComputeConfig), "llsec:v1:k1:") != 3 {
				t.Errorf("List = %v; want the tenant, its 3 secrets sealed", err)
			}
			_, err = s.UpdateObserved(ctx, created.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning})
			check("UpdateObserved", err)
			_, err = s.RequestDeletion(ctx, created.ID, 0, "test")
			check("RequestDeletion", err)
			_, err = seal.Rotate(ctx, mustRewriter(t, s), configs, seal.RotateOptions{Decrypt: true})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	if raw := db.Raw(t, created.ID); strings.Count(raw, "llsec:v1:k1:") != 3 {
		t.Errorf("the failed reads and writes changed the stored config: %s", raw)
	}
}
