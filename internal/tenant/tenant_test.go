package tenant_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func TestTransitions(t *testing.T) {
	s := func(v string) tenant.Status { return tenant.Status(v) }
	allowed := map[string]bool{
		"requested>provisioning": true, "requested>failed": true, "requested>deleting": true,
		"provisioning>ready": true, "provisioning>failed": true, "provisioning>deleting": true,
		"ready>updating": true, "ready>provisioning": true, "ready>failed": true, "ready>deleting": true,
		"updating>ready": true, "updating>failed": true, "updating>deleting": true,
		"failed>provisioning": true, "failed>updating": true, "failed>ready": true, "failed>deleting": true,
		"deleting>deleted": true, "deleting>failed": true,
	}
	for _, from := range tenant.Statuses {
		for _, to := range tenant.Statuses {
			key := string(from) + ">" + string(to)
			want := allowed[key] || (from == to && from != tenant.StatusDeleted)
			if got := tenant.CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s) = %v, want %v", key, got, want)
			}
			if err := tenant.CheckTransition(from, to); (err == nil) != want || (err != nil && !errors.Is(err, tenant.ErrInvalidTransition)) {
				t.Errorf("CheckTransition(%s) = %v", key, err)
			}
		}
	}
	if tenant.CanTransition(s("sleeping"), s("sleeping")) || tenant.CanTransition(tenant.StatusReady, s("sleeping")) {
		t.Error("unknown states must never transition")
	}
}

func TestNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"acme": true, "a": true, "0": true, "acme-corp-2": true, strings.Repeat("a", 63): true,
		"": false, strings.Repeat("a", 64): false, "Acme": false, "-acme": false, "acme-": false, "ac_me": false, "ac.me": false,
		"0192f0c4-1d2e-7000-8000-000000000001": false, // reads as an id
	} {
		if err := tenant.ValidateName(name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v, want ok %v", name, err, ok)
		}
	}
	id := tenant.NewID()
	if !tenant.IsID(id) || id[14] != '7' {
		t.Errorf("NewID() = %q, want a version 7 UUID", id)
	}
	if tenant.IsID("acme") || tenant.IsID("{"+id+"}") || tenant.IsID("urn:uuid:"+id) {
		t.Error("IsID accepts what is not a canonical id")
	}
	a, b := tenant.NewID(), tenant.NewID()
	if a >= b {
		t.Errorf("ids are not time-ordered: %s then %s", a, b)
	}
}

func TestSelectors(t *testing.T) {
	sel, err := tenant.ParseSelector([]string{"tier=gold", "example.com/team=a", "empty="})
	if err != nil || len(sel) != 3 || sel["example.com/team"] != "a" || sel["empty"] != "" {
		t.Errorf("ParseSelector = %v, %v", sel, err)
	}
	for _, bad := range []string{"tier", "=gold", "ti er=gold", "tier=go ld", "tier=gold=x"} {
		if _, err := tenant.ParseSelector([]string{bad}); !errors.Is(err, tenant.ErrInvalid) {
			t.Errorf("ParseSelector(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestPageTokens(t *testing.T) {
	id := tenant.NewID()
	got, err := tenant.DecodeTenantPageToken(tenant.EncodePageToken(id))
	if err != nil || got != id {
		t.Errorf("round trip = %q, %v", got, err)
	}
	seq, err := tenant.DecodeEventPageToken(tenant.EncodePageToken("42"), false)
	if err != nil || seq != 42 {
		t.Errorf("event token = %d, %v", seq, err)
	}
	for _, bad := range []string{"x", "e30", tenant.EncodePageToken("acme")} {
		if _, err := tenant.DecodeTenantPageToken(bad); !errors.Is(err, tenant.ErrInvalidPageToken) {
			t.Errorf("DecodeTenantPageToken(%q) = %v", bad, err)
		}
	}
	if _, err := tenant.DecodeEventPageToken(tenant.EncodePageToken("-1"), false); !errors.Is(err, tenant.ErrInvalidPageToken) {
		t.Error("a negative sequence must be refused")
	}
	for _, newest := range []bool{false, true} {
		token := tenant.EncodeEventPageToken(42, newest)
		if seq, err := tenant.DecodeEventPageToken(token, newest); err != nil || seq != 42 {
			t.Errorf("event token (newest %t) = %d, %v", newest, seq, err)
		}
		if _, err := tenant.DecodeEventPageToken(token, !newest); !errors.Is(err, tenant.ErrInvalidPageToken) {
			t.Errorf("a token of newest %t taken by a listing of newest %t: %v", newest, !newest, err)
		}
	}
	for _, bad := range []string{tenant.EncodePageToken("<0"), tenant.EncodePageToken("<-1"), tenant.EncodePageToken("<")} {
		if _, err := tenant.DecodeEventPageToken(bad, true); !errors.Is(err, tenant.ErrInvalidPageToken) {
			t.Errorf("DecodeEventPageToken(%q, true) = %v", bad, err)
		}
	}
	for in, want := range map[int]int{0: 50, -3: 50, 1: 1, 500: 500, 501: 500} {
		if got := tenant.ClampPageSize(in); got != want {
			t.Errorf("ClampPageSize(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestApplyDesiredIgnoresSpelling(t *testing.T) {
	now := time.Now()
	cur, _, err := tenant.NewTenant(&tenant.Tenant{Name: "acme", Provider: "mock", ComputeConfig: json.RawMessage(`{"a": 1e2, "b": {"c": [1, 2]}}`)}, "test", now)
	if err != nil {
		t.Fatal(err)
	}
	if string(cur.ComputeConfig) != `{"a":1e2,"b":{"c":[1,2]}}` {
		t.Errorf("stored config = %s, want it compacted with number text kept", cur.ComputeConfig)
	}
	for config, changed := range map[string]bool{
		`{"b":{"c":[1,2]},"a":100}`:    false,
		`{"a":100.00,"b":{"c":[1,2]}}`: false,
		`{"a":100,"b":{"c":[2,1]}}`:    true,
		`{"a":100.5,"b":{"c":[1,2]}}`:  true,
	} {
		next, ev, err := tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version, ComputeConfig: json.RawMessage(config)}, now)
		if err != nil {
			t.Fatal(err)
		}
		if (len(ev) > 0) != changed || (next.Generation != cur.Generation) != changed {
			t.Errorf("ApplyDesired(%s): event %v, generation %d; want changed %v", config, ev, next.Generation, changed)
		}
	}
}

func TestNeedsWork(t *testing.T) {
	for _, tt := range []struct {
		status        tenant.Status
		gen, observed int64
		needsWork     bool
	}{
		{tenant.StatusRequested, 1, 0, true},
		{tenant.StatusReady, 1, 1, false},
		{tenant.StatusReady, 2, 1, true},
		{tenant.StatusFailed, 1, 1, false},
		{tenant.StatusDeleting, 2, 1, true},
		{tenant.StatusDeleted, 2, 2, false},
		{tenant.StatusDeleted, 3, 2, false},
	} {
		tn := tenant.Tenant{Status: tt.status, Generation: tt.gen, ObservedGeneration: tt.observed}
		if got := tn.NeedsWork(); got != tt.needsWork {
			t.Errorf("%s gen %d observed %d: NeedsWork = %v", tt.status, tt.gen, tt.observed, got)
		}
	}
}
