package storetest

import (
	"bytes"
	"sync"
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func testKeys(t *testing.T, s tenant.Store) {
	ks, ok := s.(tenant.KeyStore)
	if !ok {
		t.Fatalf("%T does not implement tenant.KeyStore", s)
	}
	// Concurrent first calls all get the one key that was kept.
	const callers = 10
	keys := make([][]byte, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { keys[i], errs[i] = ks.Key(ctx, "docker-hash") })
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("Key: %v", errs[i])
		}
		if len(keys[i]) != tenant.KeySize {
			t.Fatalf("Key is %d bytes, want %d", len(keys[i]), tenant.KeySize)
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("concurrent first calls got different keys: %x and %x", keys[0], keys[i])
		}
	}
	again, err := ks.Key(ctx, "docker-hash")
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Errorf("Key again = %x, %v; want %x", again, err, keys[0])
	}
	other, err := ks.Key(ctx, "other")
	if err != nil || bytes.Equal(other, keys[0]) || bytes.Equal(other, make([]byte, tenant.KeySize)) {
		t.Errorf("Key(other) = %x, %v; want a different random key", other, err)
	}
}
