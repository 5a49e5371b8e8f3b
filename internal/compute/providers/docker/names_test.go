package docker

import (
	"context"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

func TestNewRefusesShortHashKey(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("fifteen-bytes!!")} {
		_, err := New(context.Background(), Options{Block: testBlock, HashKey: key})
		if err == nil || !strings.Contains(err.Error(), "hash key") {
			t.Errorf("New with a %d-byte hash key = %v, want an error about the hash key", len(key), err)
		}
	}
}

// The config hash is keyed: stable for one key (a restarted landlord sees no
// change), different for another, so that a reader of labels cannot test
// guesses of a secret without the key.
func TestContainerHashIsKeyed(t *testing.T) {
	c := workload.ContainerSpec{Name: "app", Image: "example/app:1"}
	hash := func(key, secret string) string {
		s := []workload.SecretReference{{Container: "app", Name: "TOKEN", Value: workload.NewSecretValue(secret)}}
		return containerHash([]byte(key), c, s, "127.0.0.1", "net", tenantOptions{})
	}
	a := hash("key-one-0123456789", "hunter2")
	if again := hash("key-one-0123456789", "hunter2"); again != a {
		t.Errorf("one key and config gave %s, then %s; the hash must be deterministic", a, again)
	}
	if other := hash("key-two-0123456789", "hunter2"); other == a {
		t.Errorf("two keys gave the same hash %s", a)
	}
	if changed := hash("key-one-0123456789", "hunter3"); changed == a {
		t.Errorf("a changed secret left the hash at %s", a)
	}
	if strings.Contains(a, "hunter2") {
		t.Errorf("the hash %s contains the secret", a)
	}
}
