package main

import (
	"encoding/json"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestCompute(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})

	res := mustRunCLI(t, srv, exitOK, "", "compute")
	mustContain(t, "stdout", res.stdout, "Provider: mock\n", "FIELD ", "image ", "string ", "yes ", "sidecars ", "list of container ",
		"Defaults (merged under each tenant's config):\n  env:\n    FROM_DEFAULTS: \"yes\"\n")

	var cfg client.ComputeConfig
	if err := json.Unmarshal([]byte(mustRunCLI(t, srv, exitOK, "", "compute", "--provider", "mock", "-o", "json").stdout), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Provider != "mock" || !json.Valid(cfg.Schema) || len(cfg.Schema) < 100 {
		t.Errorf("compute -o json: %+v", cfg)
	}
	// A provider that is not enabled is a 422 wherever it is named (docs/api.md).
	res = mustRunCLI(t, srv, exitFailure, "", "compute", "--provider", "nope")
	mustContain(t, "stderr", res.stderr, "(422 provider_not_found)", "\n  --provider: ")

	res = mustRunCLI(t, srv, exitOK, "", "compute", "providers")
	mustContain(t, "stdout", res.stdout, "NAME  DEFAULT  HEALTHY  MESSAGE\nmock  yes      yes")
	var list client.ProviderList
	if err := json.Unmarshal([]byte(mustRunCLI(t, srv, exitOK, "", "compute", "providers", "-o", "json").stdout), &list); err != nil || len(list.Providers) != 1 {
		t.Errorf("compute providers -o json: %+v, %v", list, err)
	}
	mustRunCLI(t, srv, exitUsage, "", "compute", "providers", "extra")
}
