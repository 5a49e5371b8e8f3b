package compute_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

func TestManagerAudit(t *testing.T) {
	var logs bytes.Buffer
	p := newMock(t, "")
	reg := compute.NewRegistry()
	if err := reg.Register(p); err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := compute.NewManager(reg, compute.ManagerOptions{
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Now:    func() time.Time { clock = clock.Add(250 * time.Millisecond); return clock },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resolve := func(config string) *provider.TenantComputeSpec {
		res, err := m.Resolve(ctx, compute.ResolveRequest{TenantID: "tenant-1", Generation: 2, ComputeConfig: json.RawMessage(config)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Spec
	}
	spec := resolve(`{"image":"a","secrets":{"PASSWORD":"s3cr3t-value"}}`)
	if _, err := m.ProvisionTenant(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := m.UpdateTenant(ctx, "tenant-1", resolve(`{"image":"b","secrets":{"PASSWORD":"0ther-s3cr3t"}}`)); err != nil {
		t.Fatal(err)
	}
	failing := resolve(`{"image":"b","x-mock":{"fail":"terminal"}}`)
	if _, err := m.UpdateTenant(ctx, "tenant-1", failing); err == nil {
		t.Fatal("injected failure did not fail")
	}
	if _, err := m.GetTenantStatus(ctx, provider.TenantRef{ID: "tenant-1", Provider: "mock"}); err != nil {
		t.Fatal(err)
	}
	if err := m.DestroyTenant(ctx, provider.TenantRef{ID: "tenant-1", Provider: "mock"}); err != nil {
		t.Fatal(err)
	}
	if err := m.DestroyTenant(ctx, provider.TenantRef{ID: "tenant-1", Provider: "nomad"}); !errors.Is(err, provider.ErrProviderNotFound) {
		t.Errorf("DestroyTenant on an unknown provider = %v", err)
	}

	if strings.Contains(logs.String(), "s3cr3t") {
		t.Fatalf("audit log reveals a secret:\n%s", logs.String())
	}
	var lines []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	want := []struct{ op, outcome, level string }{
		{"provision", "success", "INFO"},
		{"update", "success", "INFO"},
		{"update", "failure", "ERROR"},
		{"destroy", "success", "INFO"},
		{"destroy", "failure", "ERROR"}, // every attempt is audited, even on an unknown provider
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d audit lines, want %d:\n%s", len(lines), len(want), logs.String())
	}
	for i, w := range want {
		l := lines[i]
		got := fmt.Sprint(l["operation"], " ", l["outcome"], " ", l["level"])
		if got != w.op+" "+w.outcome+" "+w.level {
			t.Errorf("line %d = %s, want %s %s %s", i, got, w.op, w.outcome, w.level)
		}
		if l["tenant_id"] != "tenant-1" || l["provider"] == "" || l["audit"] != "compute" {
			t.Errorf("line %d lacks tenant, provider or audit marker: %v", i, l)
		}
		if l["duration"] != float64(250*time.Millisecond) {
			t.Errorf("line %d duration = %v, want 250ms", i, l["duration"])
		}
	}
	if lines[2]["retryable"] != false || !strings.Contains(fmt.Sprint(lines[2]["error"]), "injected terminal failure") {
		t.Errorf("failure line = %v", lines[2])
	}
}

func TestManagerRefusesMissingSpec(t *testing.T) {
	m := newManager(t, "", map[string]string{"mock": ""})
	if _, err := m.ProvisionTenant(context.Background(), nil); !errors.Is(err, provider.ErrInvalidSpec) {
		t.Errorf("ProvisionTenant(nil) = %v", err)
	}
	if _, err := m.UpdateTenant(context.Background(), "t", nil); !errors.Is(err, provider.ErrInvalidSpec) {
		t.Errorf("UpdateTenant(nil) = %v", err)
	}
	spec := &provider.TenantComputeSpec{TenantID: "t", ProviderType: "nomad"}
	if _, err := m.ProvisionTenant(context.Background(), spec); !errors.Is(err, provider.ErrProviderNotFound) {
		t.Errorf("ProvisionTenant on an unknown provider = %v", err)
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	spec := &provider.TenantComputeSpec{
		TenantID: "t", ProviderType: mock.Name,
		Workload: workload.Workload{Secrets: []workload.SecretReference{{Container: "app", Name: "K", Value: workload.NewSecretValue("s3cr3t")}}},
	}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "spec", spec, "secret", spec.Secrets[0].Value, "ref", spec.Secrets[0])
	b, _ := json.Marshal(spec)
	for what, s := range map[string]string{
		"%v": fmt.Sprintf("%v", spec.Secrets), "%+v": fmt.Sprintf("%+v", spec.Secrets), "%#v": fmt.Sprintf("%#v", spec.Secrets),
		"Sprint": fmt.Sprint(spec), "json": string(b), "slog": logs.String(),
	} {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("%s reveals the secret: %s", what, s)
		}
	}
	if spec.Secrets[0].Value.Reveal() != "s3cr3t" {
		t.Error("Reveal must return the secret")
	}
}
