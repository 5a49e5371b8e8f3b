package main

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// seedConfig is the configuration example of the seed document of
// docs/compute-providers.md, copied verbatim.
const seedConfig = "testdata/seed-compute.yaml"

// The seed's configuration example loads as written, and each of its
// compute blocks, alone, either starts landlord (its provider is in this
// build) or stops start-up with exit code 2 saying that the provider is not
// available in this build and what is. No Docker Engine answers here: the
// docker provider does not contact the Engine to start.
func TestSeedComputeBlocks(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-docker.sock"))
	seed, _, err := config.Load(seedConfig, func(string) string { return "" })
	if err != nil {
		t.Fatalf("load %s: %v", seedConfig, err)
	}
	blocks, err := seed.ComputeBlocks()
	if err != nil || len(blocks) == 0 {
		t.Fatalf("%s has no compute blocks: %v", seedConfig, err)
	}
	for _, name := range slices.Sorted(maps.Keys(blocks)) {
		t.Run(name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Compute = map[string]any{name: seed.Compute[name]}
			if _, err := lookupProvider(name); err != nil {
				cfg.Listen = servetest.FreeAddr(t)
				cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
				err := serve(context.Background(), cfg, "", &providertest.LogBuffer{})
				want := "provider " + name + " is not available in this build (available: " + strings.Join(providerNames(), ", ") + ")"
				if exitCode(err) != exitUsage || !strings.Contains(err.Error(), want) {
					t.Errorf("serve = %v (exit %d), want exit %d and %q", err, exitCode(err), exitUsage, want)
				}
				return
			}
			base, logs := startServe(t, cfg)
			mustContain(t, "the log", logs.String(), `"providers":"`+name+`"`)
			res, err := http.Get(base + "/v1/compute/providers")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var got struct{ Providers []struct{ Name string } }
			if err := json.NewDecoder(res.Body).Decode(&got); err != nil || len(got.Providers) != 1 || got.Providers[0].Name != name {
				t.Errorf("GET /v1/compute/providers = %+v (%v), want %s alone", got, err, name)
			}
		})
	}
}
