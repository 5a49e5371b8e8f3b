package seal_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jaxxstorm/landlord/internal/seal"
)

// placedStore is a tenant.ConfigRewriter of one tenant of several
// configs (its own and its placements'), each passed to rewrite in turn,
// which retries its transaction once, as a store whose transaction
// conflicted does.
type placedStore struct {
	configs []json.RawMessage
	calls   int
}

func (s *placedStore) RewriteConfigs(_ context.Context, after string, _ int, rewrite func(id, provider string, stored json.RawMessage) (json.RawMessage, error)) (string, error) {
	if after != "" {
		return "", nil
	}
	for attempt := 0; attempt < 2; attempt++ { // the first attempt is rolled back
		next := make([]json.RawMessage, len(s.configs))
		for i, c := range s.configs {
			s.calls++
			out, err := rewrite(tenantID, "mock", c)
			if err != nil {
				return "", err
			}
			next[i] = out
		}
		if attempt == 1 {
			for i, out := range next {
				if out != nil {
					s.configs[i] = out
				}
			}
		}
	}
	return tenantID, nil
}

// TestRotateCountsATenantOnce: a tenant whose placements hold configs of
// their own is one tenant of the stats, its values counted once each even
// when the store retries its transaction; a config that does not open
// fails the tenant, and its others are rotated.
func TestRotateCountsATenantOnce(t *testing.T) {
	old := mustConfigs(t, "k1", newKey("k1"))
	var configs []json.RawMessage
	for _, c := range []string{config, `{"image":"b","secrets":{"X":"y"}}`} {
		sealed, err := old.Seal(tenantID, "mock", json.RawMessage(c))
		if err != nil {
			t.Fatal(err)
		}
		configs = append(configs, sealed)
	}
	store := &placedStore{configs: configs}
	stats, err := seal.Rotate(t.Context(), store, mustConfigs(t, "k2", newKey("k1"), newKey("k2")), seal.RotateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Tenants != 1 || stats.Rewritten != 1 || stats.Counts.Resealed != len(plaintexts)+1 || len(stats.Failed) != 0 || store.calls != 4 {
		t.Errorf("stats %+v after %d calls; want 1 tenant rewritten, %d values resealed", stats, store.calls, len(plaintexts)+1)
	}

	// A config sealed with a key this landlord lacks fails the tenant;
	// the other config is rotated.
	stranger, err := mustConfigs(t, "k9", newKey("k9")).Seal(tenantID, "mock", json.RawMessage(`{"image":"c","secrets":{"Z":"z"}}`))
	if err != nil {
		t.Fatal(err)
	}
	store = &placedStore{configs: []json.RawMessage{configs[0], stranger}}
	stats, err = seal.Rotate(t.Context(), store, mustConfigs(t, "k3", newKey("k1"), newKey("k2"), newKey("k3")), seal.RotateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Tenants != 1 || len(stats.Failed) != 1 || stats.Rewritten != 0 || stats.Counts.Resealed != len(plaintexts) {
		t.Errorf("stats %+v; want 1 tenant failed, its other config's %d values resealed", stats, len(plaintexts))
	}
}
