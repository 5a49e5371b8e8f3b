package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestWait(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	c := srv.Client(t, "")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	t.Run("ready", func(t *testing.T) {
		cur := mustCreate(t, c, "acme", appConfig, nil)
		var seen []string
		got, err := c.Tenants().Wait(ctx, "acme", client.UntilReady, func(tn client.Tenant) { seen = append(seen, tn.Status) })
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != cur.ID || got.Status != client.StatusReady || len(seen) == 0 || seen[len(seen)-1] != client.StatusReady {
			t.Errorf("waited to %+v, saw %v", got, seen)
		}
		st, err := c.Tenants().Status(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if st.TenantID != cur.ID || st.ProviderType != "mock" {
			t.Errorf("status %+v", st)
		}

		// A change is waited for until it is observed, not merely ready.
		next, err := c.Tenants().Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: []byte(`{"image":"example.com/app:2"}`)}, client.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err = c.Tenants().Wait(ctx, "acme", client.UntilReady, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.ObservedGeneration != next.Generation {
			t.Errorf("observed %d, want %d", got.ObservedGeneration, next.Generation)
		}

		if _, err := c.Tenants().Delete(ctx, "acme", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err = c.Tenants().Wait(ctx, "acme", client.UntilDeleted, nil)
		if err != nil && !client.IsNotFound(err) {
			t.Fatal(err)
		}
		if err == nil && got.Status != client.StatusDeleted {
			t.Errorf("waited for deletion to %s", got.Status)
		}
		if _, err := c.Tenants().Get(ctx, "acme", client.GetOptions{}); !client.IsNotFound(err) {
			t.Errorf("get after deletion: %v", err)
		}
	})

	t.Run("failed", func(t *testing.T) {
		mustCreate(t, c, "broken", `{"image":"a","x-mock":{"fail":"terminal"}}`, nil)
		got, err := c.Tenants().Wait(ctx, "broken", client.UntilReady, nil)
		var failed *client.TenantFailedError
		if !errors.As(err, &failed) {
			t.Fatalf("Wait = %v, want a *TenantFailedError", err)
		}
		if got.Status != client.StatusFailed || !strings.Contains(err.Error(), "tenant broken failed: ") || !strings.Contains(err.Error(), "injected terminal failure") {
			t.Errorf("failed tenant %s: %v", got.Status, err)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		mustCreate(t, c, "slow", `{"image":"a","x-mock":{"start_after":"1h"}}`, nil)
		short, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
		defer cancel()
		got, err := c.Tenants().Wait(short, "slow", client.UntilReady, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v, want the deadline", err)
		}
		if got == nil || !strings.Contains(err.Error(), "wait for tenant slow: still ") {
			t.Errorf("timeout: %v, last %+v", err, got)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		if _, err := c.Tenants().Wait(ctx, "nobody", client.UntilReady, nil); !client.IsNotFound(err) {
			t.Errorf("Wait for nobody = %v", err)
		}
	})

	t.Run("condition error", func(t *testing.T) {
		mustCreate(t, c, "cond", appConfig, nil)
		boom := errors.New("boom")
		if _, err := c.Tenants().Wait(ctx, "cond", func(client.Tenant) (bool, error) { return false, boom }, nil); !errors.Is(err, boom) {
			t.Errorf("Wait = %v, want the condition's error", err)
		}
	})
}
