package events_test

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/events/webhooktest"
)

// TestSignReferenceVector signs the example of the Standard Webhooks
// reference libraries' tests (secret, id, timestamp and body) and gets
// their signature.
func TestSignReferenceVector(t *testing.T) {
	key, err := events.SecretKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := events.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`), [][]byte{key})
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
}

// TestSignVerifies checks signatures against the re-implemented reference
// verification: each of two secrets (a rotation) verifies, a changed
// body, id or timestamp does not, nor another secret.
func TestSignVerifies(t *testing.T) {
	newer, older, other := events.NewSecret(), events.NewSecret(), events.NewSecret()
	var keys [][]byte
	for _, s := range []string{newer, older} {
		k, err := events.SecretKey(s)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	now := time.Now()
	body := []byte(`{"specversion":"1.0","id":"evt_1"}`)
	header := func(id string, at time.Time, b []byte) http.Header {
		h := http.Header{}
		h.Set(events.HeaderID, id)
		h.Set(events.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
		h.Set(events.HeaderSignature, events.Sign(id, at, b, keys))
		return h
	}
	h := header("evt_1", now, body)
	if n := len(strings.Fields(h.Get(events.HeaderSignature))); n != 2 {
		t.Fatalf("%d signatures, want 2 (one per secret)", n)
	}
	for _, s := range []string{newer, older} {
		if err := webhooktest.Verify(s, h, body, now); err != nil {
			t.Errorf("a secret of the subscription does not verify: %v", err)
		}
	}
	if err := webhooktest.Verify(other, h, body, now); err == nil {
		t.Error("another secret verifies")
	}
	if err := webhooktest.Verify(newer, h, append(body, ' '), now); err == nil {
		t.Error("a changed body verifies")
	}
	moved := h.Clone()
	moved.Set(events.HeaderID, "evt_2")
	if err := webhooktest.Verify(newer, moved, body, now); err == nil {
		t.Error("another id verifies")
	}
	if err := webhooktest.Verify(newer, h, body, now.Add(6*time.Minute)); err == nil {
		t.Error("a timestamp 6 minutes old verifies")
	}
}

// TestSecretKey checks the secret's form: whsec_, base64, 24 to 64 bytes.
func TestSecretKey(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	for _, tc := range []struct {
		secret string
		ok     bool
	}{
		{"whsec_" + b64(24), true},
		{"whsec_" + b64(64), true},
		{"whsec_" + b64(23), false},
		{"whsec_" + b64(65), false},
		{b64(32), false},
		{"whsec_not base64!", false},
		{"", false},
	} {
		_, err := events.SecretKey(tc.secret)
		if (err == nil) != tc.ok {
			t.Errorf("SecretKey(%.20q…): error %v, want ok %v", tc.secret, err, tc.ok)
		}
	}
	if _, err := events.SecretKey(events.NewSecret()); err != nil {
		t.Errorf("a new secret: %v", err)
	}
}

func TestIDKey(t *testing.T) {
	for _, tc := range []struct {
		id   string
		key  int64
		isID bool
	}{
		{"evt_000000000000002a0123456789abcdef", 42, true},
		{"evt_7fffffffffffffff0123456789abcdef", 1<<63 - 1, true},
		{"evt_00000000000000000123456789abcdef", 0, false}, // no event is 0
		{"evt_000000000000002a0123456789abcde", 0, false},  // short
		{"evt_000000000000002a0123456789abcdeg", 0, false}, // not hex
		{"evt_800000000000002a0123456789abcdef", 0, false}, // beyond int64
		{"msg_000000000000002a0123456789abcdef", 0, false},
		{"", 0, false},
	} {
		key, ok := events.IDKey(tc.id)
		if ok != tc.isID || key != tc.key {
			t.Errorf("IDKey(%q) = %d, %v; want %d, %v", tc.id, key, ok, tc.key, tc.isID)
		}
	}
}
