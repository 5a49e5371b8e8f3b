package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const maxIdempotencyKey = 255

// replayIdempotent answers a request that repeats an earlier one with the
// same Idempotency-Key: the same response for the same body, a 422 for
// another body. It returns the key to save the response under, and whether
// it has answered.
func (s *Server) replayIdempotent(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return "", false, nil
	}
	if len(key) > maxIdempotencyKey || !printable(key) {
		return "", false, problem(http.StatusBadRequest, CodeInvalidParameter, "Idempotency-Key must be 1 to 255 printable ASCII characters",
			FieldError{Parameter: "Idempotency-Key", Message: "must be 1 to 255 printable ASCII characters"})
	}
	prev, err := s.idem.GetIdempotent(r.Context(), actor(r), key)
	switch {
	case errors.Is(err, tenant.ErrNotFound):
		return key, false, nil
	case err != nil:
		return "", false, err
	case prev.RequestHash != requestHash(r, body):
		return "", false, problem(http.StatusUnprocessableEntity, CodeIdempotencyMismatch,
			"this Idempotency-Key was used for a different request in the last 24 hours; use a new key",
			FieldError{Parameter: "Idempotency-Key", Message: "was used for a different request"})
	}
	w.Header().Set("Idempotent-Replayed", "true")
	writeRaw(w, prev.Status, prev.Header, prev.Body)
	return key, true, nil
}

// saveIdempotent keeps a response for retries with the same key. A failure
// to keep it does not fail the request that did the work.
//
// The work is done: the response is kept even if the client has gone,
// so that its retry finds it.
func (s *Server) saveIdempotent(r *http.Request, key string, body []byte, status int, header map[string]string, out []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	_, _, err := s.idem.SaveIdempotent(ctx, tenant.IdempotentResponse{
		Actor: actor(r), Key: key, RequestHash: requestHash(r, body), Status: status, Header: header, Body: out,
	})
	if err != nil {
		s.log.WarnContext(r.Context(), "cannot keep the response for its Idempotency-Key; a retry would be done again",
			slog.String("request_id", requestID(r)), slog.Any("error", err))
	}
}

// requestHash fingerprints a request: method, path and query, and the body
// without insignificant whitespace.
func requestHash(r *http.Request, body []byte) string {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.RequestURI() + "\n"))
	var compact bytes.Buffer
	if json.Compact(&compact, body) == nil {
		body = compact.Bytes()
	}
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
