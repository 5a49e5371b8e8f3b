package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// Tenants is the tenants resource of the API. Methods taking idOrName accept
// a tenant's id or its name.
type Tenants struct {
	c *Client
}

// CreateOptions modify a create.
type CreateOptions struct {
	// DryRun validates and returns the tenant as it would be stored, with
	// its effective_config, and stores nothing.
	DryRun bool
	// IdempotencyKey makes retries safe: the same key and body within 24
	// hours get the first answer again, without creating anything.
	IdempotencyKey string
}

// GetOptions modify a get.
type GetOptions struct {
	// IncludeDeleted finds a deleted tenant too.
	IncludeDeleted bool
}

// ListOptions filter and page a list. Zero values do not filter.
type ListOptions struct {
	// Statuses keeps tenants in any of these statuses.
	Statuses []string
	// Provider keeps tenants of this compute provider: for a tenant with
	// placements, any of whose placements runs on it.
	Provider string
	// Labels keeps tenants with every one of these labels, each "key=value".
	Labels []string
	// NamePrefix keeps tenants whose name starts with it.
	NamePrefix string
	// Plan keeps tenants that follow this plan.
	Plan string
	// IncludeDeleted lists deleted tenants too.
	IncludeDeleted bool
	// PageSize is how many tenants a page holds at most (1–500); 0 means
	// the server's default (50).
	PageSize int
	// PageToken is the NextPageToken of the previous page.
	PageToken string
}

// UpdateOptions modify a change: a tenant's replace or patch, a move, a
// subscription's update or secret rotation.
type UpdateOptions struct {
	// IfMatch, when not 0, is the version (of the tenant or subscription)
	// the change is meant for: if it changed since, the change is refused
	// with a 412 *Error.
	IfMatch int64
	// DryRun, for a tenant's replace or patch (and so Retry), makes every
	// check the change would (IfMatch too, refused with the same *Error)
	// and returns the tenant as the change would make it, with its
	// EffectiveConfig and ConfigLayers; it stores nothing and records no
	// event. Moves and subscriptions have no dry run: their methods return
	// an error, and send nothing, when it is set.
	DryRun bool
}

// noDryRun is the error of a change that has no dry run, what, asked for
// one: it is refused rather than made for real or ignored, so that nobody
// takes it for a check.
func noDryRun(opts UpdateOptions, what string) error {
	if opts.DryRun {
		return fmt.Errorf("client: dry run is not supported for %s", what)
	}
	return nil
}

// DeleteOptions modify a delete.
type DeleteOptions struct {
	// IfMatch, when not 0, is the tenant version the deletion is meant for.
	IfMatch int64
	// Forget deletes the record of a tenant whose provider the server has
	// not enabled, at once, destroying nothing: what it ran may still run.
	// A tenant whose provider is enabled is a 409 *Error (code
	// provider_enabled).
	Forget bool
}

// EventOptions page a tenant's history.
type EventOptions struct {
	// PageSize is how many events a page holds at most (1–500); 0 means the
	// server's default.
	PageSize int
	// PageToken is the NextPageToken of the previous page, of the same order.
	PageToken string
	// Newest lists the history newest first (order=newest), as a page of
	// the latest events needs; a page token of the other order is a 400
	// *Error.
	Newest bool
	// Placement, when set, lists only the events of that placement of a
	// tenant with placements (Event.Placement); a name the tenant has no
	// placement of is a 404 *Error.
	Placement string
}

// StatusOptions modify a status read.
type StatusOptions struct {
	// Placement names the placement whose workload to read. A tenant
	// with placements needs it (a 400 *Error without), and a name it has
	// no placement of is a 404 *Error; a tenant of one placement needs
	// none.
	Placement string
}

// Create creates a tenant; the controller then provisions it. A taken name
// is a 409 *Error, a config its provider refuses a 422 *Error with a
// pointer per violation.
func (s *Tenants) Create(ctx context.Context, req CreateTenantRequest, opts CreateOptions) (*Tenant, error) {
	return s.create(ctx, req, opts)
}

func (s *Tenants) create(ctx context.Context, body any, opts CreateOptions) (*Tenant, error) {
	q := url.Values{}
	if opts.DryRun {
		q.Set("dry_run", "true")
	}
	var out Tenant
	if err := s.c.do(ctx, request{method: "POST", path: "/v1/tenants", query: q, header: idempotencyHeader(opts.IdempotencyKey), body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateRaw creates a tenant from a body that is already JSON (a
// CreateTenantRequest as a file or an editor holds it), sent as it is, so
// that the API judges every member of it.
func (s *Tenants) CreateRaw(ctx context.Context, body json.RawMessage, opts CreateOptions) (*Tenant, error) {
	return s.create(ctx, body, opts)
}

// Get returns a tenant; an unknown (or, without IncludeDeleted, deleted)
// tenant is a 404 *Error.
func (s *Tenants) Get(ctx context.Context, idOrName string, opts GetOptions) (*Tenant, error) {
	path, err := pathFor(idOrName)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if opts.IncludeDeleted {
		q.Set("include_deleted", "true")
	}
	var out Tenant
	if err := s.c.do(ctx, request{method: "GET", path: path, query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List returns one page of tenants.
func (s *Tenants) List(ctx context.Context, opts ListOptions) (*TenantList, error) {
	q := url.Values{}
	for _, st := range opts.Statuses {
		q.Add("status", st)
	}
	for _, l := range opts.Labels {
		q.Add("label", l)
	}
	setNonEmpty(q, "provider", opts.Provider)
	setNonEmpty(q, "name_prefix", opts.NamePrefix)
	setNonEmpty(q, "plan", opts.Plan)
	setNonEmpty(q, "page_token", opts.PageToken)
	if opts.IncludeDeleted {
		q.Set("include_deleted", "true")
	}
	if opts.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(opts.PageSize))
	}
	var out TenantList
	if err := s.c.do(ctx, request{method: "GET", path: "/v1/tenants", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// All iterates over every tenant that opts selects, from opts.PageToken on,
// fetching pages as it goes. It yields an error at most once, then stops.
func (s *Tenants) All(ctx context.Context, opts ListOptions) iter.Seq2[Tenant, error] {
	return func(yield func(Tenant, error) bool) {
		for {
			page, err := s.List(ctx, opts)
			if err != nil {
				yield(Tenant{}, err)
				return
			}
			for _, t := range page.Tenants {
				if !yield(t, nil) {
					return
				}
			}
			if page.NextPageToken == "" {
				return
			}
			opts.PageToken = page.NextPageToken
		}
	}
}

// Replace replaces a tenant's desired state: compute_config (or, for a
// tenant with placements, every placement: those left out are removed and
// their workloads destroyed), labels and annotations. Labels or
// Annotations left nil keep the tenant's; an empty, non-nil map removes
// them all. A secret sent back as "[redacted]" keeps its stored value.
// With opts.DryRun it returns the tenant as the replace would make it and
// stores nothing.
func (s *Tenants) Replace(ctx context.Context, idOrName string, req ReplaceTenantRequest, opts UpdateOptions) (*Tenant, error) {
	return s.change(ctx, idOrName, "PUT", "application/json", req, opts)
}

// ReplaceRaw replaces a tenant's desired state with a body that is
// already JSON (a ReplaceTenantRequest as an editor holds it), sent as it
// is.
func (s *Tenants) ReplaceRaw(ctx context.Context, idOrName string, body json.RawMessage, opts UpdateOptions) (*Tenant, error) {
	return s.change(ctx, idOrName, "PUT", "application/json", body, opts)
}

// Patch changes a tenant's desired state with a JSON merge patch (RFC 7396)
// of compute_config, placements (replaced whole, as a merge patch
// replaces an array), labels, annotations, plan and maintenance_window:
// what it does not name stays, null removes. With opts.DryRun it returns
// the tenant as the patch would make it and stores nothing.
func (s *Tenants) Patch(ctx context.Context, idOrName string, patch json.RawMessage, opts UpdateOptions) (*Tenant, error) {
	return s.change(ctx, idOrName, "PATCH", "application/merge-patch+json", patch, opts)
}

func (s *Tenants) change(ctx context.Context, idOrName, method, contentType string, body any, opts UpdateOptions) (*Tenant, error) {
	path, err := pathFor(idOrName)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if opts.DryRun {
		q.Set("dry_run", "true")
	}
	var out Tenant
	req := request{method: method, path: path, query: q, header: ifMatchHeader(opts.IfMatch), body: body, contentType: contentType}
	if err := s.c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete asks for a tenant's deletion and returns it as deleting; the
// controller then destroys its workload. Asking again is harmless; a deleted
// tenant is a 404 *Error. With Forget it returns the tenant deleted.
func (s *Tenants) Delete(ctx context.Context, idOrName string, opts DeleteOptions) (*Tenant, error) {
	path, err := pathFor(idOrName)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if opts.Forget {
		q.Set("forget", "true")
	}
	var out Tenant
	if err := s.c.do(ctx, request{method: "DELETE", path: path, query: q, header: ifMatchHeader(opts.IfMatch)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Events returns one page of a tenant's history, oldest first unless
// opts.Newest.
func (s *Tenants) Events(ctx context.Context, idOrName string, opts EventOptions) (*EventList, error) {
	path, err := pathFor(idOrName, "/events")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	setNonEmpty(q, "page_token", opts.PageToken)
	setNonEmpty(q, "placement", opts.Placement)
	if opts.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(opts.PageSize))
	}
	if opts.Newest {
		q.Set("order", "newest")
	}
	var out EventList
	if err := s.c.do(ctx, request{method: "GET", path: path, query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllEvents iterates over a tenant's whole history from opts.PageToken on,
// in the order opts asks for, fetching pages as it goes. It yields an error
// at most once, then stops.
func (s *Tenants) AllEvents(ctx context.Context, idOrName string, opts EventOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			page, err := s.Events(ctx, idOrName, opts)
			if err != nil {
				yield(Event{}, err)
				return
			}
			for _, e := range page.Events {
				if !yield(e, nil) {
					return
				}
			}
			if page.NextPageToken == "" {
				return
			}
			opts.PageToken = page.NextPageToken
		}
	}
}

// Status returns the live status of a tenant's workload from its provider;
// a tenant without a workload is a 404 *Error with code workload_not_found.
// A tenant with placements has a workload per placement: read one with
// StatusOf.
func (s *Tenants) Status(ctx context.Context, idOrName string) (*ComputeStatus, error) {
	return s.StatusOf(ctx, idOrName, StatusOptions{})
}

// StatusOf returns the live status of the workload of a tenant's
// placement opts.Placement (see StatusOptions) from its provider, as
// Status does a tenant's.
func (s *Tenants) StatusOf(ctx context.Context, idOrName string, opts StatusOptions) (*ComputeStatus, error) {
	path, err := pathFor(idOrName, "/status")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	setNonEmpty(q, "placement", opts.Placement)
	var out ComputeStatus
	if err := s.c.do(ctx, request{method: "GET", path: path, query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func setNonEmpty(q url.Values, key, value string) {
	if value != "" {
		q.Set(key, value)
	}
}

func idempotencyHeader(key string) http.Header {
	if key == "" {
		return nil
	}
	return http.Header{"Idempotency-Key": {key}}
}

func ifMatchHeader(version int64) http.Header {
	if version == 0 {
		return nil
	}
	return http.Header{"If-Match": {`"` + strconv.FormatInt(version, 10) + `"`}}
}
