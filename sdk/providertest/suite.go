package providertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Run drives h.Provider through every contract of provider.Provider, each as a
// named subtest. Workloads it creates are destroyed when it ends.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Provider == nil || h.Config == nil {
		t.Fatal("providertest: Harness needs a Provider and a Config")
	}
	s := newSuite(t, &h)
	if h.CountResources == nil {
		t.Log("providertest: Harness.CountResources is not set; duplicated or leaked platform resources will go unnoticed")
	}
	t.Run("Interface", s.testInterface)
	t.Run("Schema", s.testSchema)
	t.Run("Validate", s.testValidate)
	t.Run("UnknownTenant", s.testUnknownTenant)
	t.Run("Lifecycle", s.testLifecycle)
	t.Run("ProvisionCancelled", s.testProvisionCancelled)
	t.Run("UpdateCancelled", s.testUpdateCancelled)
	t.Run("DestroyCancelled", s.testDestroyCancelled)
	t.Run("OutOfBand", s.testOutOfBand)
	t.Run("Inspect", s.testInspect)
	t.Run("Tamper", s.testTamper)
	t.Run("Restart", s.testRestart)
	t.Run("Conflict", s.testConflict)
	t.Run("SameTenantConcurrently", s.testSameTenantConcurrently)
	t.Run("ParallelTenants", s.testParallelTenants)
	t.Run("Locate", s.testLocate)
	t.Run("Logs", s.testLogs)
}

type suite struct {
	h       *Harness
	p       provider.Provider
	manager *compute.Manager
	secret  string // injected into configs when the schema has "secrets"
}

func newSuite(t *testing.T, h *Harness) *suite {
	reg := compute.NewRegistry()
	if err := reg.Register(h.Provider); err != nil {
		t.Fatalf("register provider: %v", err)
	}
	m, err := compute.NewManager(reg, compute.ManagerOptions{})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	s := &suite{h: h, p: h.Provider, manager: m}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(h.Provider.ConfigSchema(), &schema); err == nil {
		if _, ok := schema.Properties["secrets"]; ok {
			s.secret = "conformance-secret-" + randomHex(8)
			if h.SecretValue != nil {
				s.secret = h.SecretValue(s.secret)
			}
		}
	}
	return s
}

// config returns variant v of the harness config, with the suite's secret.
func (s *suite) config(t *testing.T, v int) json.RawMessage {
	t.Helper()
	config, err := s.configErr(v)
	if err != nil {
		t.Fatal(err)
	}
	return config
}

func (s *suite) configErr(v int) (json.RawMessage, error) {
	raw := s.h.Config(v)
	if s.secret == "" {
		return raw, nil
	}
	merged, err := workload.Merge(raw, json.RawMessage(fmt.Sprintf(`{"secrets":{"LANDLORD_CONFORMANCE_SECRET":%q}}`, s.secret)))
	if err != nil {
		return nil, fmt.Errorf("add secret to config variant %d: %w", v, err)
	}
	return merged, nil
}

// tenant is one tenant the suite drives.
type tenant struct {
	id   string
	name string
}

func (s *suite) newTenant(t *testing.T) tenant {
	t.Helper()
	id := newID()
	tn := tenant{id: id, name: "conf-" + id[len(id)-8:]}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.h.readyTimeout())
		defer cancel()
		if err := s.p.Destroy(ctx, tn.id); err != nil {
			t.Errorf("cleanup: destroy tenant %s: %v", tn.id, err)
		}
	})
	return tn
}

// specWith resolves config variant v after edit changes it.
func (s *suite) specWith(t *testing.T, tn tenant, v int, edit func(map[string]any)) *provider.TenantComputeSpec {
	t.Helper()
	var config map[string]any
	if err := json.Unmarshal(s.config(t, v), &config); err != nil {
		t.Fatal(err)
	}
	edit(config)
	raw, _ := json.Marshal(config)
	res, err := s.manager.Resolve(context.Background(), compute.ResolveRequest{TenantID: tn.id, TenantName: tn.name, Generation: int64(v + 10), ComputeConfig: raw})
	if err != nil {
		t.Fatalf("resolve edited config variant %d: %v", v, err)
	}
	return res.Spec
}

// spec resolves config variant v for the tenant through the Manager, as the
// controller does.
func (s *suite) spec(t *testing.T, tn tenant, v int) *provider.TenantComputeSpec {
	t.Helper()
	res, err := s.manager.Resolve(context.Background(), compute.ResolveRequest{
		TenantID:      tn.id,
		TenantName:    tn.name,
		Generation:    int64(v + 1),
		ComputeConfig: s.config(t, v),
	})
	if err != nil {
		t.Fatalf("resolve config variant %d: %v", v, err)
	}
	return res.Spec
}

func (s *suite) provision(t *testing.T, spec *provider.TenantComputeSpec) *provider.ProvisionResult {
	t.Helper()
	res, err := s.p.Provision(context.Background(), spec)
	if err != nil {
		t.Fatalf("Provision(%s): %v", spec.TenantID, err)
	}
	if res == nil {
		t.Fatalf("Provision(%s) returned no result and no error", spec.TenantID)
	}
	if res.TenantID != spec.TenantID || res.ProviderType != s.p.Name() {
		t.Errorf("Provision result is for tenant %q on %q, want %q on %q", res.TenantID, res.ProviderType, spec.TenantID, s.p.Name())
	}
	if res.Status != provider.ProvisionStatusSuccess && res.Status != provider.ProvisionStatusInProgress {
		t.Errorf("Provision result status = %q, want success or in_progress", res.Status)
	}
	return res
}

func (s *suite) update(t *testing.T, spec *provider.TenantComputeSpec) *provider.UpdateResult {
	t.Helper()
	res, err := s.p.Update(context.Background(), spec.TenantID, spec)
	if err != nil {
		t.Fatalf("Update(%s): %v", spec.TenantID, err)
	}
	if res == nil {
		t.Fatalf("Update(%s) returned no result and no error", spec.TenantID)
	}
	return res
}

// waitRunning polls GetStatus until every container of spec runs its image.
func (s *suite) waitRunning(t *testing.T, spec *provider.TenantComputeSpec) *provider.ComputeStatus {
	t.Helper()
	var running *provider.ComputeStatus
	poll.Until(t, fmt.Sprintf("tenant %s runs its spec", spec.TenantID), s.h.readyTimeout(), func() (bool, string) {
		st, err := s.p.GetStatus(context.Background(), spec.TenantID)
		if err != nil {
			return false, "GetStatus error: " + err.Error()
		}
		if !runs(st, spec) {
			return false, "status " + describe(st)
		}
		running = st
		return true, ""
	})
	return running
}

// runs reports whether st shows every container of spec running its image.
func runs(st *provider.ComputeStatus, spec *provider.TenantComputeSpec) bool {
	if st == nil || st.TenantID != spec.TenantID || st.ProviderType != spec.ProviderType ||
		st.State != provider.StateRunning || len(st.Containers) != len(spec.Containers) {
		return false
	}
	for _, want := range spec.Containers {
		found := false
		for _, c := range st.Containers {
			if c.Name == want.Name && c.Image == want.Image && c.State == provider.ContainerRunning {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func describe(st *provider.ComputeStatus) string {
	if st == nil {
		return "<nil>"
	}
	b, _ := json.Marshal(st)
	return string(b)
}

func (s *suite) expectNotFound(t *testing.T, tenantID, when string) {
	t.Helper()
	st, err := s.p.GetStatus(context.Background(), tenantID)
	if !errors.Is(err, provider.ErrTenantNotFound) {
		t.Fatalf("%s: GetStatus(%s) = %s, %v; want an error wrapping ErrTenantNotFound", when, tenantID, describe(st), err)
	}
	if !strings.Contains(err.Error(), tenantID) {
		t.Errorf("%s: GetStatus error %q does not name the tenant %s", when, err, tenantID)
	}
	s.expectResources(t, tenantID, 0, when)
}

func (s *suite) expectResources(t *testing.T, tenantID string, want int, when string) {
	t.Helper()
	if s.h.CountResources == nil {
		return
	}
	if got := s.h.CountResources(t, tenantID); got != want {
		t.Fatalf("%s: %d platform resources exist for tenant %s, want %d", when, got, tenantID, want)
	}
}

// noSecret fails when the suite's secret appears in any of values, marshalled.
func (s *suite) noSecret(t *testing.T, what string, values ...any) {
	t.Helper()
	if s.secret == "" {
		return
	}
	for _, v := range values {
		b, _ := json.Marshal(v)
		if bytes.Contains(b, []byte(s.secret)) || strings.Contains(fmt.Sprintf("%+v", v), s.secret) {
			t.Errorf("%s reveals a secret value: %s", what, b)
		}
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// parallelDo runs fn for i in [0, n) at once and waits for all.
func parallelDo(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { fn(i) })
	}
	wg.Wait()
}

// newID returns a random UUID (version 4) in canonical form.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
