package api

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

func problem(status int, code, detail string, errs ...wire.FieldError) *wire.Problem {
	return &wire.Problem{
		Type:   "https://landlord.dev/problems/" + code,
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Code:   code,
		Errors: errs,
	}
}

// errUpstream marks a failure of a compute provider's platform that a
// request ran into (a status read, say): a 502 whose detail keeps the
// cause, sanitized.
var errUpstream = errors.New("the compute provider failed")

// problemRow maps one sentinel error to one HTTP status and code.
type problemRow struct {
	err    error
	name   string // the sentinel's Go name, for docs/api.md
	status int
	code   string
	// detail is the problem's detail; empty means the error's own words.
	detail string
	// fields, if set, names the fields at fault that the error carries.
	fields func(err error) []wire.FieldError
}

// problemTable is the one mapping from domain errors to HTTP: each sentinel
// has one status and one code. problemFor picks the row of the outermost
// sentinel an error wraps, so the order of the rows does not matter.
// docs/api.md lists the table (see TestProblemTableDocumented).
var problemTable = []problemRow{
	{err: tenant.ErrNotFound, name: "tenant.ErrNotFound", status: http.StatusNotFound, code: wire.CodeTenantNotFound,
		detail: "no such tenant; list tenants with GET /v1/tenants"},
	{err: tenant.ErrNameTaken, name: "tenant.ErrNameTaken", status: http.StatusConflict, code: wire.CodeNameTaken,
		detail: "a tenant that is not deleted already has this name; choose another or delete that tenant first",
		fields: func(error) []wire.FieldError { return []wire.FieldError{{Pointer: "/name", Message: "is taken"}} }},
	{err: tenant.ErrPlacementNotFound, name: "tenant.ErrPlacementNotFound", status: http.StatusNotFound, code: wire.CodeNotFound,
		detail: "the tenant has no such placement; GET the tenant for its placements' names (a tenant of several needs placement named)",
		fields: func(error) []wire.FieldError {
			return []wire.FieldError{{Pointer: "/placement", Message: "names no placement of the tenant"}}
		}},
	// A move's refusal says which of its reasons it is, and what to do:
	// the error's own words.
	{err: tenant.ErrMoving, name: "tenant.ErrMoving", status: http.StatusConflict, code: wire.CodeTenantMoving},
	{err: tenant.ErrConflict, name: "tenant.ErrConflict", status: http.StatusConflict, code: wire.CodeVersionConflict,
		detail: "the tenant changed while the request was handled; read it again and retry"},
	{err: tenant.ErrUnavailable, name: "tenant.ErrUnavailable", status: http.StatusServiceUnavailable, code: wire.CodeStorageUnavailable,
		detail: "the database cannot take this request now (its disk is full, or it cannot be reached); nothing was written: retry after Retry-After seconds"},
	{err: tenant.ErrSecretUnreadable, name: "tenant.ErrSecretUnreadable", status: http.StatusServiceUnavailable, code: wire.CodeSecretUnreadable,
		detail: "a secret of this tenant is stored sealed with an encryption key this landlord does not have (or does not open with it); the operator must configure that key (encryption.keys): landlord's log names it under this request's id"},
	{err: tenant.ErrInvalidPageToken, name: "tenant.ErrInvalidPageToken", status: http.StatusBadRequest, code: wire.CodeInvalidParameter,
		fields: func(error) []wire.FieldError {
			return []wire.FieldError{{Parameter: "page_token", Message: "was not returned by this listing"}}
		}},
	{err: tenant.ErrPlanNotFound, name: "tenant.ErrPlanNotFound", status: http.StatusUnprocessableEntity, code: wire.CodeInvalidPlan,
		detail: "the plan the tenant is to follow no longer exists, lacks the version or is for another provider: it changed while the request was handled; read it (GET /v1/plans/{plan}) and retry",
		fields: violationsAt("")},
	{err: tenant.ErrInvalid, name: "tenant.ErrInvalid", status: http.StatusBadRequest, code: wire.CodeInvalidBody,
		detail: "the request breaks the tenant rules", fields: violationsAt("")},
	{err: provider.ErrInvalidSpec, name: "provider.ErrInvalidSpec", status: http.StatusUnprocessableEntity, code: wire.CodeInvalidComputeConfig,
		detail: "compute_config is not valid for its provider", fields: violationsAt("/compute_config")},
	{err: compute.ErrInvalidChoice, name: "compute.ErrInvalidChoice", status: http.StatusUnprocessableEntity, code: wire.CodeInvalidComputeConfig,
		detail: "a label or annotation chooses a provider this tenant cannot use", fields: violationsAt("")},
	{err: provider.ErrProviderNotFound, name: "provider.ErrProviderNotFound", status: http.StatusUnprocessableEntity, code: wire.CodeProviderNotFound,
		fields: providerChoice},
	{err: provider.ErrTenantNotFound, name: "provider.ErrTenantNotFound", status: http.StatusNotFound, code: wire.CodeWorkloadNotFound,
		detail: "the provider has no workload for this tenant"},
	{err: provider.ErrProvisionFailed, name: "provider.ErrProvisionFailed", status: http.StatusBadGateway, code: wire.CodeUnavailable,
		detail: "the compute provider could not provision the workload"},
	{err: provider.ErrUpdateFailed, name: "provider.ErrUpdateFailed", status: http.StatusBadGateway, code: wire.CodeUnavailable,
		detail: "the compute provider could not update the workload"},
	{err: provider.ErrProviderUnavailable, name: "provider.ErrProviderUnavailable", status: http.StatusBadGateway, code: wire.CodeProviderUnavailable,
		detail: "the compute provider is not running (a plugin being restarted); retry shortly"},
	{err: fleet.ErrNotFound, name: "fleet.ErrNotFound", status: http.StatusNotFound, code: wire.CodeNotFound,
		detail: "no such plan, plan version or rollout; list them with GET /v1/plans, GET /v1/plans/{plan}/versions and GET /v1/rollouts"},
	{err: fleet.ErrExists, name: "fleet.ErrExists", status: http.StatusConflict, code: wire.CodePlanExists,
		detail: "a plan with this name exists already; choose another name",
		fields: func(error) []wire.FieldError { return []wire.FieldError{{Pointer: "/name", Message: "is taken"}} }},
	{err: fleet.ErrConflict, name: "fleet.ErrConflict", status: http.StatusConflict, code: wire.CodeVersionConflict,
		detail: "the plan or rollout changed while the request was handled; read it again and retry"},
	{err: fleet.ErrInUse, name: "fleet.ErrInUse", status: http.StatusConflict, code: wire.CodePlanInUse,
		detail: "the plan is in use: tenants that are not deleted follow it, or a rollout of it has not finished; " +
			"move its tenants off it (PATCH each with {\"plan\": null}, or to another plan) and finish or abort its rollouts, then delete it"},
	{err: fleet.ErrInvalid, name: "fleet.ErrInvalid", status: http.StatusUnprocessableEntity, code: wire.CodeInvalidBody,
		detail: "the request breaks the plan or rollout rules", fields: violationsAt("")},
	{err: fleet.ErrState, name: "fleet.ErrState", status: http.StatusConflict, code: wire.CodeRolloutState},
	{err: events.ErrNotFound, name: "events.ErrNotFound", status: http.StatusNotFound, code: wire.CodeNotFound},
	{err: events.ErrNameTaken, name: "events.ErrNameTaken", status: http.StatusConflict, code: wire.CodeNameTaken,
		detail: "a subscription already has this name; choose another, or change that one",
		fields: func(error) []wire.FieldError { return []wire.FieldError{{Pointer: "/name", Message: "is taken"}} }},
	{err: events.ErrConflict, name: "events.ErrConflict", status: http.StatusConflict, code: wire.CodeVersionConflict},
	{err: errUpstream, name: "a provider's own error while a request reads from it", status: http.StatusBadGateway, code: wire.CodeUnavailable,
		detail: "the compute provider did not answer"},
}

// problemRows finds a sentinel's row.
var problemRows = indexProblems(problemTable)

func indexProblems(table []problemRow) map[error]*problemRow {
	rows := map[error]*problemRow{}
	for i := range table {
		rows[table[i].err] = &table[i]
	}
	return rows
}

// violationsAt lists an error's violations as fields, under prefix.
func violationsAt(prefix string) func(error) []wire.FieldError {
	return func(err error) []wire.FieldError {
		var out []wire.FieldError
		for _, v := range violation.Of(err) {
			out = append(out, wire.FieldError{Pointer: prefix + v.Pointer, Message: v.Message})
		}
		return out
	}
}

// problemFor is the one mapping from errors to HTTP: a *Problem as it is,
// else the row of problemTable of the outermost sentinel err wraps. It
// returns nil for an error no row maps (a 500 whose cause is logged).
func problemFor(err error) *wire.Problem {
	var p *wire.Problem
	if errors.As(err, &p) {
		return p
	}
	if p := serviceProblem(err); p != nil {
		return p
	}
	row := outermostRow(err)
	if row == nil {
		return nil
	}
	p = problem(row.status, row.code, row.detail)
	if row.fields != nil {
		p.Errors = row.fields(err)
	}
	switch {
	case row.detail == "" || (len(p.Errors) == 0 && row.fields != nil):
		p.Detail = err.Error()
	case row.err == errUpstream:
		p.Detail += ": " + sanitize(err)
	}
	return p
}

// kindStatus is the HTTP status of each kind of refusal of a use case.
var kindStatus = map[service.Kind]int{
	service.KindMalformed:   http.StatusBadRequest,
	service.KindInvalid:     http.StatusUnprocessableEntity,
	service.KindNotFound:    http.StatusNotFound,
	service.KindConflict:    http.StatusConflict,
	service.KindUnsupported: http.StatusNotImplemented,
}

// serviceProblem is the problem of a use case's refusal (service.Error,
// service.StaleError, service.BreaksTenantsError), or nil for another
// error.
func serviceProblem(err error) *wire.Problem {
	var refused *service.Error
	var stale *service.StaleError
	var breaks *service.BreaksTenantsError
	switch {
	case errors.As(err, &refused) && refused.Kind == service.KindFromCause:
		p := problemFor(refused.Err)
		if p == nil {
			return nil
		}
		if refused.Detail != "" {
			p.Detail = refused.Detail
		}
		p.Errors = fieldErrors(refused.Fields)
		return p
	case refused != nil:
		return problem(kindStatus[refused.Kind], refused.Code, refused.Detail, fieldErrors(refused.Fields)...)
	case errors.As(err, &stale):
		detail := fmt.Sprintf("the %s changed since the ETag in If-Match was read; read it again", stale.What)
		if stale.Current > 0 {
			detail += fmt.Sprintf(" (it is now %s)", etag(stale.Current))
		}
		return problem(http.StatusPreconditionFailed, wire.CodePreconditionFailed, detail)
	case errors.As(err, &breaks):
		var fields []wire.FieldError
		for _, b := range breaks.Tenants {
			fields = append(fields, tenantProblems(b.Tenant, b.Err)...)
		}
		return problem(http.StatusUnprocessableEntity, wire.CodePlanBreaksTenants, breaks.Error(), fields...)
	}
	return nil
}

// fieldErrors are the wire form of the fields at fault of a refusal.
func fieldErrors(fields []service.Field) []wire.FieldError {
	if len(fields) == 0 {
		return nil
	}
	out := make([]wire.FieldError, len(fields))
	for i, f := range fields {
		out[i] = wire.FieldError{Pointer: f.Pointer, Parameter: f.Parameter, Message: f.Message}
	}
	return out
}

// providerChoice names the key that chose a provider that is not enabled
// (compute_config's compute_provider, or a label or annotation) as the
// field at fault; compute_config's compute_provider when nothing chose one.
func providerChoice(err error) []wire.FieldError {
	var nf *compute.ProviderNotFoundError
	if !errors.As(err, &nf) {
		return nil
	}
	at := nf.Pointer()
	if at == "" {
		at = "/compute_config/" + wire.SelectionKey
	}
	return []wire.FieldError{{Pointer: at, Message: nf.Error()}}
}

// outermostRow walks err's tree outside in and returns the row of the first
// sentinel it meets.
func outermostRow(err error) *problemRow {
	if err == nil {
		return nil
	}
	if row, ok := problemRows[err]; ok {
		return row
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return outermostRow(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if row := outermostRow(e); row != nil {
				return row
			}
		}
	}
	return nil
}

// sanitize words an upstream cause for a client: what follows the
// errUpstream mark, one line, at most 300 characters. Providers never put
// secrets in errors; this keeps a platform's long or multi-line answer from
// reaching the client whole.
func sanitize(err error) string {
	msg := strings.TrimPrefix(err.Error(), errUpstream.Error()+": ")
	msg = strings.Join(strings.FieldsFunc(msg, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "…"
	}
	return msg
}

// withFields returns err's problem (status and code from the table) with
// fields naming what was at fault and, if detail is not empty, that
// detail. An error no row maps is returned as it is.
func withFields(err error, detail string, fields ...wire.FieldError) error {
	p := problemFor(err)
	if p == nil {
		return err
	}
	if detail != "" {
		p.Detail = detail
	}
	p.Errors = fields
	return p
}

// MaxFieldErrors is how many fields at fault a problem lists; the others
// are counted in ErrorsOmitted and the detail, so that the answer to a body
// with 20,000 bad label keys is a few kilobytes, not megabytes.
const MaxFieldErrors = 100

// MaxFieldErrorBytes bounds the text of the fields a problem lists (their
// pointers, parameters and messages) past the first: a body may hold a
// hundred violations at pointers up to 64 keys of 512 bytes deep.
const MaxFieldErrorBytes = 16 << 10

// capErrors keeps the first fields of p, at most MaxFieldErrors and
// MaxFieldErrorBytes, and counts the rest.
func capErrors(p *wire.Problem) {
	keep, size := 0, 0
	for keep < len(p.Errors) && keep < MaxFieldErrors {
		e := p.Errors[keep]
		size += len(e.Pointer) + len(e.Parameter) + len(e.Message)
		if keep > 0 && size > MaxFieldErrorBytes {
			break
		}
		keep++
	}
	if keep == len(p.Errors) {
		return
	}
	p.ErrorsOmitted = len(p.Errors) - keep
	p.Errors = p.Errors[:keep:keep]
	p.Detail += fmt.Sprintf(" (%d problems are listed, and %d more)", keep, p.ErrorsOmitted)
}

// maxErrorMemberField bounds the text of the field errorMember names: the
// problem lists the field whole.
const maxErrorMemberField = 512

// errorMember is the problem's error member: its detail (its title when it
// has none) and, when fields are at fault, the first of them and how many
// more there are, so that a client that shows only error shows why:
// "compute_config is not valid for its provider: /compute_config/image: is
// required (and 2 more)". Called before capErrors, it counts every field.
func errorMember(p *wire.Problem) string {
	msg := cmp.Or(p.Detail, p.Title)
	if len(p.Errors) == 0 {
		return msg
	}
	first := p.Errors[0]
	var at string
	switch {
	case first.Pointer != "":
		at = first.Pointer + ": "
	case first.Parameter != "":
		at = "parameter " + first.Parameter + ": "
	}
	field := at + first.Message
	if len(field) > maxErrorMemberField {
		cut := maxErrorMemberField
		for cut > 0 && !utf8.RuneStart(field[cut]) {
			cut--
		}
		field = field[:cut] + "…"
	}
	msg += ": " + field
	if more := len(p.Errors) - 1 + p.ErrorsOmitted; more > 0 {
		msg += fmt.Sprintf(" (and %d more)", more)
	}
	return msg
}

// storageRetryAfter is the Retry-After, in seconds, of a 503 for a
// database that cannot take a request.
const storageRetryAfter = "5"

// writeProblem sends p, or, for an error no problem maps, a 500 that says
// nothing of its cause (which is logged).
func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	p := problemFor(err)
	if p == nil {
		s.log.ErrorContext(r.Context(), "request failed", slog.String("request_id", requestID(r)), slog.String("tenant_id", info(r).tenantID), slog.Any("error", err))
		p = problem(http.StatusInternalServerError, wire.CodeInternal, "landlord could not handle the request; the request id finds the cause in its log")
	}
	p.Instance = requestID(r)
	p.ErrorMessage = errorMember(p)
	capErrors(p)
	if errors.Is(err, tenant.ErrSecretUnreadable) {
		s.log.ErrorContext(r.Context(), "a stored secret does not open", slog.String("request_id", requestID(r)), slog.String("tenant_id", info(r).tenantID), slog.Any("error", err))
	}
	if errors.Is(err, tenant.ErrUnavailable) {
		// /readyz turns unready until a write goes through again.
		s.writesFailing.Store(true)
		w.Header().Set("Retry-After", storageRetryAfter)
		s.log.WarnContext(r.Context(), "the database cannot take a request", slog.String("request_id", requestID(r)), slog.Any("error", err))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
