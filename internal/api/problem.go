package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Problem is an RFC 9457 problem detail, with landlord's extensions: a
// stable machine-readable code and the fields at fault.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Code is stable across releases; clients branch on it.
	Code string `json:"code"`
	// Errors lists every field at fault.
	Errors []FieldError `json:"errors,omitempty"`
	// Instance is the request id, to find the request in the logs.
	Instance string `json:"instance,omitempty"`
}

// FieldError is one problem with one field of a request.
type FieldError struct {
	// Pointer is the RFC 6901 JSON pointer of the field in the request body.
	Pointer string `json:"pointer,omitempty"`
	// Parameter names the query parameter or header at fault.
	Parameter string `json:"parameter,omitempty"`
	Message   string `json:"message"`
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Code, p.Detail) }

// Problem codes.
const (
	CodeBadRequest           = "bad_request"
	CodeInvalidBody          = "invalid_body"
	CodeInvalidName          = "invalid_name"
	CodeInvalidParameter     = "invalid_parameter"
	CodeInvalidComputeConfig = "invalid_compute_config"
	CodeUnauthorized         = "unauthorized"
	CodeForbidden            = "forbidden"
	CodeNotFound             = "not_found"
	CodeTenantNotFound       = "tenant_not_found"
	CodeWorkloadNotFound     = "workload_not_found"
	CodeProviderNotFound     = "provider_not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeNameTaken            = "name_taken"
	CodeVersionConflict      = "version_conflict"
	CodeTenantDeleting       = "tenant_deleting"
	CodePreconditionFailed   = "precondition_failed"
	CodeBodyTooLarge         = "body_too_large"
	CodeIdempotencyMismatch  = "idempotency_key_reused"
	CodeUnavailable          = "unavailable"
	CodeInternal             = "internal"
)

func problem(status int, code, detail string, errs ...FieldError) *Problem {
	return &Problem{
		Type:   "https://landlord.dev/problems/" + code,
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Code:   code,
		Errors: errs,
	}
}

// invalid is a 422 (or 400) problem from a validation error, with pointers
// under prefix.
func invalid(status int, code, detail, prefix string, err error) *Problem {
	p := problem(status, code, detail)
	for _, v := range compute.Violations(err) {
		p.Errors = append(p.Errors, FieldError{Pointer: prefix + v.Pointer, Message: v.Message})
	}
	if len(p.Errors) == 0 {
		p.Detail = err.Error()
	}
	return p
}

// problemFor is the one mapping from domain errors to HTTP. Anything it does
// not know is a 500 whose cause is logged, never returned.
func problemFor(err error) *Problem {
	var p *Problem
	var nf *compute.ProviderNotFoundError
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &nf):
		return problem(http.StatusUnprocessableEntity, CodeProviderNotFound, nf.Error(),
			FieldError{Pointer: "/compute_config/" + compute.SelectionKey, Message: nf.Error()})
	case errors.Is(err, tenant.ErrNotFound):
		return problem(http.StatusNotFound, CodeTenantNotFound, "no such tenant; list tenants with GET /v1/tenants")
	case errors.Is(err, tenant.ErrNameTaken):
		return problem(http.StatusConflict, CodeNameTaken, "a tenant that is not deleted already has this name; choose another or delete that tenant first",
			FieldError{Pointer: "/name", Message: "is taken"})
	case errors.Is(err, tenant.ErrConflict):
		return problem(http.StatusConflict, CodeVersionConflict, "the tenant changed while the request was handled; read it again and retry")
	case errors.Is(err, tenant.ErrInvalidPageToken):
		return problem(http.StatusBadRequest, CodeInvalidParameter, err.Error(), FieldError{Parameter: "page_token", Message: "was not returned by this listing"})
	case errors.Is(err, tenant.ErrInvalid):
		return invalid(http.StatusBadRequest, CodeInvalidBody, "the request breaks the tenant rules", "", err)
	case errors.Is(err, compute.ErrInvalidSpec):
		return invalid(http.StatusUnprocessableEntity, CodeInvalidComputeConfig, "compute_config is not valid for its provider", "/compute_config", err)
	}
	return nil
}

// writeProblem sends p, or, for an error no problem maps, a 500 that says
// nothing of its cause (which is logged).
func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	p := problemFor(err)
	if p == nil {
		s.log.ErrorContext(r.Context(), "request failed", slog.String("request_id", requestID(r)), slog.String("tenant_id", info(r).tenantID), slog.Any("error", err))
		p = problem(http.StatusInternalServerError, CodeInternal, "landlord could not handle the request; the request id finds the cause in its log")
	}
	p.Instance = requestID(r)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
