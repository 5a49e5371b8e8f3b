// Package webhooktest is a webhook receiver for tests: it verifies each
// delivery as the Standard Webhooks reference libraries do, re-implemented
// here from the specification's documented algorithm
// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md,
// "Verifying webhook authenticity"), not from landlord's signer, so that a
// mistake in the signer is not shared by the check; and it records every
// request, for the tests to judge order and duplicates.
package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tolerance is the reference libraries' bound on a timestamp's distance
// from the receiver's clock (5 minutes, either way).
const Tolerance = 5 * time.Minute

// Verify checks a delivery's headers and body against secret (whsec_ and
// base64) as the reference verification does: the three headers present;
// the timestamp within Tolerance of now; the secret's whsec_ prefix
// removed and the rest base64-decoded into the key; HMAC-SHA256 of
// "{webhook-id}.{webhook-timestamp}.{body}" base64-encoded; and that
// compared in constant time with each space-delimited signature of version
// v1 (others ignored): one match verifies it.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing required headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("invalid signature headers")
	}
	at := time.Unix(sec, 0)
	if now.Sub(at) > Tolerance {
		return errors.New("message timestamp too old")
	}
	if at.Sub(now) > Tolerance {
		return errors.New("message timestamp too new")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for sig := range strings.SplitSeq(sigs, " ") {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		if hmac.Equal([]byte(value), expected) {
			return nil
		}
	}
	return errors.New("no matching signature found")
}

// Request is one request the receiver got.
type Request struct {
	ID       string // webhook-id
	Sequence int64  // the CloudEvent's sequence
	Type     string
	Subject  string
	Body     []byte
	// Status is what the receiver answered: 0 when it hung until the
	// sender gave up.
	Status      int
	VerifyError error
	At          time.Time
}

// Receiver is an http.Handler that verifies and records deliveries and
// answers each with what Answer chooses.
type Receiver struct {
	// Secrets are the secrets a delivery may verify with (any one).
	Secrets []string
	// Answer picks the status of a request (0: hang until the sender
	// gives up, at most Hang); nil answers 204.
	Answer func(r *Request) int
	// Hang bounds a hung request; 0 means 30 s.
	Hang time.Duration

	mu   sync.Mutex
	reqs []*Request
}

// ServeHTTP implements http.Handler.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := &Request{ID: r.Header.Get("webhook-id"), Body: body, At: time.Now()}
	req.VerifyError = errors.New("no secret")
	for _, s := range rc.Secrets {
		if req.VerifyError = Verify(s, r.Header, body, time.Now()); req.VerifyError == nil {
			break
		}
	}
	var ce struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Subject  string `json:"subject"`
		Sequence string `json:"sequence"`
	}
	if err := json.Unmarshal(body, &ce); err == nil {
		req.Type, req.Subject = ce.Type, ce.Subject
		req.Sequence, _ = strconv.ParseInt(ce.Sequence, 10, 64)
		if ce.ID != req.ID && req.VerifyError == nil {
			req.VerifyError = fmt.Errorf("webhook-id %s is not the CloudEvent's id %s", req.ID, ce.ID)
		}
	}
	status := http.StatusNoContent
	if rc.Answer != nil {
		status = rc.Answer(req)
	}
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, req)
	rc.mu.Unlock()
	if status == 0 {
		hang := rc.Hang
		if hang == 0 {
			hang = 30 * time.Second
		}
		select {
		case <-r.Context().Done():
		case <-time.After(hang):
		}
		return
	}
	rc.mu.Lock()
	req.Status = status
	rc.mu.Unlock()
	w.WriteHeader(status)
}

// Requests returns a copy of what was received, in arrival order.
func (rc *Receiver) Requests() []Request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]Request, len(rc.reqs))
	for i, r := range rc.reqs {
		out[i] = *r
	}
	return out
}
