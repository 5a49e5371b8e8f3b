package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

const maxIdempotencyKey = 255

// youngReservation is how long a request that holds its key is taken to be
// working: requests take milliseconds. One held longer has most likely died
// with its landlord, and keeps the key until its lease lapses
// (Options.IdempotencyLease).
const youngReservation = 2 * time.Second

// retryAfter is the Retry-After, in whole seconds, of a 409
// idempotency_in_progress for a key reserved at reserved under lease: a
// second while the reservation is young, else until its lease lapses and a
// retry takes it over.
func retryAfter(reserved, now time.Time, lease time.Duration) string {
	age := now.Sub(reserved)
	wait := time.Second
	if age > youngReservation {
		wait = max(wait, lease-age)
	}
	return strconv.Itoa(int(math.Ceil(wait.Seconds())))
}

// heldKey is a request's reservation of its Idempotency-Key.
type heldKey struct {
	res tenant.IdempotentResponse
	// done is set once the reservation holds the response, or is no
	// longer the request's: there is nothing to release.
	done bool
}

// reserveIdempotent reserves the request's Idempotency-Key before the
// request does anything, so that of the requests with one key only one does
// the work. It returns nil for a request without a key. A key another
// request holds or has used is answered here (see answerKept): then it
// returns true.
//
// The caller must store its response with the reservation, in the
// transaction of its write, or release it (releaseIdempotent).
func (s *Server) reserveIdempotent(w http.ResponseWriter, r *http.Request, body []byte) (*heldKey, bool, error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return nil, false, nil
	}
	if len(key) > maxIdempotencyKey || !printable(key) {
		return nil, false, problem(http.StatusBadRequest, wire.CodeInvalidParameter, "Idempotency-Key must be 1 to 255 printable ASCII characters",
			wire.FieldError{Parameter: "Idempotency-Key", Message: "must be 1 to 255 printable ASCII characters"})
	}
	hash := requestHash(r, body)
	kept, fresh, err := s.idem.ReserveIdempotent(r.Context(), idempotencyScope(r), key, hash, s.opts.IdempotencyLease)
	if err != nil {
		return nil, false, err
	}
	if fresh {
		return &heldKey{res: kept}, false, nil
	}
	return nil, true, s.answerKept(w, kept, hash)
}

// idempotencyScope is whose Idempotency-Keys a request's is among: its
// actor's, apart from any other credential of the same name (a JWT whose
// subject is a token's name must not replay that token's responses). A
// token's scope is its name, which holds no control character (see
// newAuthenticator); the others' have their kind and a unit separator
// before it.
func idempotencyScope(r *http.Request) string {
	switch i := info(r); i.kind {
	case "", identity.KindToken:
		return i.actor
	default:
		return i.kind + "\x1f" + i.actor
	}
}

// readIdempotent reads a create's JSON body into req, a pointer, strictly
// (readRaw, decodeStrict), then reserves its Idempotency-Key
// (reserveIdempotent), whose results it returns: the body is checked
// before the key is taken, so that a request refused for its body holds
// no key. The caller must release the key it holds (releaseIdempotent).
func (s *Server) readIdempotent(w http.ResponseWriter, r *http.Request, req any) (*heldKey, bool, error) {
	body, err := s.readRaw(w, r, contentJSON)
	if err != nil {
		return nil, false, err
	}
	if err := decodeStrict(body, req); err != nil {
		return nil, false, err
	}
	return s.reserveIdempotent(w, r, body)
}

// answerKept answers a request whose key another request holds or has used:
// with that request's response, for the same request; with a 409 while that
// one is in progress; with a 422 for another request.
func (s *Server) answerKept(w http.ResponseWriter, kept tenant.IdempotentResponse, hash string) error {
	switch {
	case kept.RequestHash != hash:
		return problem(http.StatusUnprocessableEntity, wire.CodeIdempotencyMismatch,
			"this Idempotency-Key was used for a different request in the last 24 hours; use a new key",
			wire.FieldError{Parameter: "Idempotency-Key", Message: "was used for a different request"})
	case kept.Pending():
		w.Header().Set("Retry-After", retryAfter(kept.CreatedAt, s.opts.Now(), s.opts.IdempotencyLease))
		return problem(http.StatusConflict, wire.CodeIdempotencyPending,
			"a request with this Idempotency-Key is in progress; retry after Retry-After seconds to get its response",
			wire.FieldError{Parameter: "Idempotency-Key", Message: "is held by a request in progress"})
	}
	w.Header().Set("Idempotent-Replayed", "true")
	writeRaw(w, kept.Status, kept.Header, kept.Body)
	return nil
}

// answerLost answers a request whose reservation was taken from it (it took
// longer than the lease) and whose write was therefore not stored: as
// answerKept, by what the key holds now.
func (s *Server) answerLost(w http.ResponseWriter, r *http.Request, h *heldKey) error {
	h.done = true
	kept, err := s.idem.GetIdempotent(r.Context(), h.res.Actor, h.res.Key)
	if errors.Is(err, tenant.ErrNotFound) {
		// The taker failed and released the key: a retry does the work.
		kept = tenant.IdempotentResponse{RequestHash: h.res.RequestHash, CreatedAt: s.opts.Now()}
	} else if err != nil {
		return err
	}
	return s.answerKept(w, kept, h.res.RequestHash)
}

// keepResponse does a request's write and answers with the response
// respond makes of what it stored. A request that holds its key (held)
// writes with a service.Keep, which stores that response for the key in
// the write's transaction; one whose reservation was lost meanwhile is
// answered as answerLost says. The write's errors are returned, for the
// caller to word.
func keepResponse[T any](s *Server, w http.ResponseWriter, r *http.Request, held *heldKey,
	write func(*service.Keep[T]) (T, error), respond func(T) tenant.IdempotentResponse) error {
	var resp tenant.IdempotentResponse
	if held == nil {
		stored, err := write(nil)
		if err != nil {
			return err
		}
		resp = respond(stored)
	} else {
		_, err := write(&service.Keep[T]{Reservation: held.res, Respond: func(stored T) (tenant.IdempotentResponse, error) {
			resp = respond(stored)
			return resp, nil
		}})
		if errors.Is(err, tenant.ErrReservationLost) {
			return s.answerLost(w, r, held)
		}
		if err != nil {
			return err
		}
		held.done = true
	}
	writeRaw(w, resp.Status, resp.Header, resp.Body)
	return nil
}

// created is a 201 response with body v and header, for writeKept.
func created(v any, header map[string]string) tenant.IdempotentResponse {
	body, _ := json.Marshal(v)
	return tenant.IdempotentResponse{Status: http.StatusCreated, Header: header, Body: body}
}

// releaseIdempotent frees the key of a request that ends without storing
// its response — it failed, or was a dry run — so that a retry does the
// work again. It is not stopped by the request's cancellation; should it
// fail, the reservation lapses after its lease.
func (s *Server) releaseIdempotent(r *http.Request, h *heldKey) {
	if h == nil || h.done {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	if err := s.idem.ReleaseIdempotent(ctx, h.res); err != nil {
		s.log.WarnContext(r.Context(), "cannot release the Idempotency-Key of a failed request; retries with it wait for its lease to lapse",
			slog.String("request_id", requestID(r)), slog.Duration("lease", s.opts.IdempotencyLease), slog.Any("error", err))
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
