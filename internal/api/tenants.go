package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

const (
	contentJSON       = "application/json"
	contentMergePatch = "application/merge-patch+json"
)

// createTenant creates a tenant, or, with dry_run, answers what it would
// be, with its effective config and the layers it is made of (see
// service.CreateTenant).
func (s *Server) createTenant(w http.ResponseWriter, r *http.Request) error {
	dryRun, err := boolParam(r, "dry_run")
	if err != nil {
		return err
	}
	var req wire.CreateTenantRequest
	held, answered, err := s.readIdempotent(w, r, &req)
	if err != nil || answered {
		return err
	}
	// A request that stores nothing (it failed, or is a dry run) frees its
	// key for a retry.
	defer s.releaseIdempotent(r, held)
	in := service.NewTenant{Name: req.Name, ComputeConfig: req.ComputeConfig, Placements: placementRequests(req.Placements),
		Labels: req.Labels, Annotations: req.Annotations,
		MaintenanceWindow: domainWindow(req.MaintenanceWindow), Plan: planChoice(req.Plan),
		Seen: func(t *tenant.Tenant) { noteTenant(r, t.ID) }}
	if dryRun {
		c, err := s.svc.CreateTenant(r.Context(), in, actor(r), true, nil)
		if err != nil {
			return err
		}
		out, err := s.renderResolved(c.Tenant, c.Resolution, c.PlanConfig, c.Resolutions)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	// The tenant and the response a retry gets commit together.
	return keepResponse(s, w, r, held,
		func(keep *service.Keep[*tenant.Tenant]) (*tenant.Tenant, error) {
			c, err := s.svc.CreateTenant(r.Context(), in, actor(r), false, keep)
			if err != nil {
				return nil, err
			}
			return c.Tenant, nil
		},
		s.createdResponse)
}

// createdResponse is the response to a create of t.
func (s *Server) createdResponse(t *tenant.Tenant) tenant.IdempotentResponse {
	return created(s.render(t), map[string]string{"Location": "/v1/tenants/" + t.ID, "ETag": etag(t.Version)})
}

func (s *Server) getTenant(w http.ResponseWriter, r *http.Request) error {
	includeDeleted, err := boolParam(r, "include_deleted")
	if err != nil {
		return err
	}
	t, err := s.store.Get(r.Context(), r.PathValue("tenant"), tenant.GetOptions{IncludeDeleted: includeDeleted})
	if err != nil {
		return err
	}
	noteTenant(r, t.ID)
	s.writeTenant(w, http.StatusOK, t)
	return nil
}

func (s *Server) listTenants(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	opts := tenant.ListOptions{Provider: q.Get("provider"), NamePrefix: q.Get("name_prefix"), Plan: q.Get("plan"), PageToken: q.Get("page_token")}
	for _, v := range q["status"] {
		for _, st := range strings.Split(v, ",") {
			if !tenant.Status(st).Valid() {
				return problem(http.StatusBadRequest, wire.CodeInvalidParameter, fmt.Sprintf("%q is not a tenant status", st),
					wire.FieldError{Parameter: "status", Message: "must be one of requested, provisioning, ready, updating, deleting, deleted, failed"})
			}
			opts.Statuses = append(opts.Statuses, tenant.Status(st))
		}
	}
	if labels := q["label"]; len(labels) > 0 {
		sel, err := tenant.ParseSelector(labels)
		if err != nil {
			var errs []wire.FieldError
			for _, v := range violation.Of(err) {
				errs = append(errs, wire.FieldError{Parameter: "label", Message: v.Message})
			}
			return problem(http.StatusBadRequest, wire.CodeInvalidParameter, "a label selector is not of the form key=value", errs...)
		}
		opts.Labels = sel
	}
	var err error
	if opts.IncludeDeleted, err = boolParam(r, "include_deleted"); err != nil {
		return err
	}
	if opts.PageSize, err = pageSize(r); err != nil {
		return err
	}
	page, err := s.store.List(r.Context(), opts)
	if err != nil {
		return err
	}
	out := wire.TenantList{Tenants: make([]wire.Tenant, len(page.Tenants)), NextPageToken: page.NextPageToken}
	for i, t := range page.Tenants {
		out.Tenants[i] = s.render(t)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// replaceTenant replaces a tenant's desired state. labels and annotations
// left out (or null) keep the tenant's, so that a client that knows nothing
// of them does not wipe them; {} clears them.
func (s *Server) replaceTenant(w http.ResponseWriter, r *http.Request) error {
	var req wire.ReplaceTenantRequest
	body, err := s.readRaw(w, r, contentJSON)
	if err != nil {
		return err
	}
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	if req.Placements == nil {
		if err := service.RequireObject(req.ComputeConfig, "/compute_config"); err != nil {
			return err
		}
	}
	return s.change(w, r, service.Replace(service.Replacement{ComputeConfig: req.ComputeConfig, Placements: placementRequests(req.Placements),
		Labels: req.Labels, Annotations: req.Annotations,
		MaintenanceWindow: domainWindow(req.MaintenanceWindow), Plan: planChoice(req.Plan)}))
}

func (s *Server) patchTenant(w http.ResponseWriter, r *http.Request) error {
	body, err := s.readRaw(w, r, contentMergePatch, contentJSON)
	if err != nil {
		return err
	}
	patch, err := decodePatch(body)
	if err != nil {
		return err
	}
	return s.change(w, r, service.Patch(patch))
}

// change applies a new desired state made from the current tenant (see
// service.ChangeTenant) and answers with the tenant changed, or, with
// dry_run, checks it as a change would (If-Match too) and answers the
// tenant as the change would make it, rendered as a create's dry run is,
// with the ETag of the tenant as stored (unchanged): the version an
// If-Match on the real change names.
func (s *Server) change(w http.ResponseWriter, r *http.Request, next func(cur *tenant.Tenant) (service.Desired, error)) error {
	expect, err := parseIfMatch(r)
	if err != nil {
		return err
	}
	dryRun, err := boolParam(r, "dry_run")
	if err != nil {
		return err
	}
	c, err := s.svc.ChangeTenant(r.Context(), service.Change{Tenant: r.PathValue("tenant"), Expect: expect, Actor: actor(r),
		Seen: func(t *tenant.Tenant) { noteTenant(r, t.ID) }, Next: next, DryRun: dryRun})
	if err != nil {
		return err
	}
	if !dryRun {
		s.writeTenant(w, http.StatusOK, c.Tenant)
		return nil
	}
	out, err := s.renderResolved(c.Tenant, c.Resolution, c.PlanConfig, c.Resolutions)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(c.Version))
	writeJSON(w, http.StatusOK, out)
	return nil
}

// deleteTenant asks for the deletion of a tenant, or, with forget=true,
// forgets one whose provider is not enabled (service.DeleteTenant): the
// log then says who forgot it and what may be left running.
func (s *Server) deleteTenant(w http.ResponseWriter, r *http.Request) error {
	expect, err := parseIfMatch(r)
	if err != nil {
		return err
	}
	forget, err := boolParam(r, "forget")
	if err != nil {
		return err
	}
	var seen *tenant.Tenant
	out, err := s.svc.DeleteTenant(r.Context(), service.Deletion{Tenant: r.PathValue("tenant"), Expect: expect, Actor: actor(r), Forget: forget,
		Seen: func(t *tenant.Tenant) { seen = t; noteTenant(r, t.ID) }})
	if err != nil {
		return err
	}
	if !forget {
		s.writeTenant(w, http.StatusAccepted, out)
		return nil
	}
	s.log.WarnContext(r.Context(), "tenant forgotten: its record is deleted, its workload was not destroyed",
		slog.String("request_id", requestID(r)), slog.String("tenant_id", seen.ID), slog.String("tenant", seen.Name),
		slog.String("provider", seen.Provider), slog.String("actor", actor(r)), slog.String("may_still_run", service.LeftRunning(seen)))
	s.writeTenant(w, http.StatusOK, out)
	return nil
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	t, err := s.store.Get(r.Context(), r.PathValue("tenant"), tenant.GetOptions{IncludeDeleted: true})
	if err != nil {
		return err
	}
	size, err := pageSize(r)
	if err != nil {
		return err
	}
	newest, err := eventOrder(r)
	if err != nil {
		return err
	}
	placement := r.URL.Query().Get("placement")
	if placement != "" && t.Placement(placement) == nil {
		return unknownPlacement(t, placement)
	}
	page, err := s.store.ListEvents(r.Context(), t.ID, tenant.EventListOptions{PageSize: size, PageToken: r.URL.Query().Get("page_token"), Newest: newest,
		Placement: placement})
	if err != nil {
		return err
	}
	out := wire.EventList{Events: make([]wire.Event, len(page.Events)), NextPageToken: page.NextPageToken}
	for i, e := range page.Events {
		out.Events[i] = wire.Event{Time: e.Time, Placement: e.Placement, Type: string(e.Type), From: string(e.From), To: string(e.To),
			Generation: e.Generation, Message: e.Message, Actor: e.Actor}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getStatus(w http.ResponseWriter, r *http.Request) error {
	t, err := s.store.Get(r.Context(), r.PathValue("tenant"), tenant.GetOptions{})
	if err != nil {
		return err
	}
	p, err := statusPlacement(r, t)
	if err != nil {
		return err
	}
	st, err := s.compute.GetTenantStatus(r.Context(), tenant.ComputeRefOf(p))
	switch {
	case errors.Is(err, provider.ErrTenantNotFound):
		return withFields(err, fmt.Sprintf("the provider %s has no workload for this tenant (status %s)", t.Provider, t.Status))
	case errors.Is(err, provider.ErrProviderNotFound):
		return withFields(err, fmt.Sprintf("the tenant's provider %s is not enabled on this server; enable it to read the workload's status", t.Provider))
	case errors.Is(err, provider.ErrProviderUnavailable):
		return err // 502 provider_unavailable: the provider itself is away, not the workload
	case err != nil:
		return fmt.Errorf("%w: %s: %w", errUpstream, t.Provider, err)
	}
	writeJSON(w, http.StatusOK, computeStatus(st))
	return nil
}

// render is the API's view of a tenant: secrets redacted.
func (s *Server) render(t *tenant.Tenant) wire.Tenant {
	config := s.redacted(t.Provider, t.ComputeConfig)
	out := wire.Tenant{
		ID: t.ID, Name: t.Name, ComputeProvider: t.Provider, ComputeConfig: config,
		Plan: wirePlan(t.Plan), MaintenanceWindow: wireWindow(t.MaintenanceWindow),
		Labels: t.Labels, Annotations: t.Annotations,
		Status: string(t.Status), StatusMessage: t.StatusMessage,
		Generation: t.Generation, ObservedGeneration: t.ObservedGeneration, Version: t.Version,
		Attempts: t.Attempts, RetryAt: t.RetryAt, ResourceIDs: t.ResourceIDs, Endpoints: endpoints(t.Endpoints),
		Drift:     wireDrift(t.Drift),
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, DeletedAt: t.DeletedAt,
	}
	if !t.Simple() {
		out.Placements = make([]wire.Placement, len(t.Placements))
		for i := range t.Placements {
			out.Placements[i] = s.renderPlacement(&t.Placements[i])
		}
	}
	return out
}

// renderResolved is the API's view of t as a dry run shows it: with the
// effective config of its first placement (res, none when nil) and the
// layers it is made of (planConfig the plan's), and each placement's
// effective config (resolutions, in the order of t's placements; none
// where nil).
func (s *Server) renderResolved(t *tenant.Tenant, res *compute.Resolution, planConfig json.RawMessage, resolutions []*compute.Resolution) (wire.Tenant, error) {
	out := s.render(t)
	var err error
	if res != nil {
		if out.EffectiveConfig, err = s.compute.RedactConfig(t.Provider, res.Spec.ProviderConfig); err != nil {
			return wire.Tenant{}, err
		}
		if out.ConfigLayers, err = s.configLayers(t.Provider, planConfig, t.ComputeConfig); err != nil {
			return wire.Tenant{}, err
		}
	}
	for i := range out.Placements {
		p := &out.Placements[i]
		if i >= len(resolutions) || resolutions[i] == nil {
			continue
		}
		if p.EffectiveConfig, err = s.compute.RedactConfig(p.ComputeProvider, resolutions[i].Spec.ProviderConfig); err != nil {
			return wire.Tenant{}, err
		}
	}
	return out, nil
}

// redacted is a compute_config of provider with its secrets redacted.
func (s *Server) redacted(provider string, config json.RawMessage) json.RawMessage {
	out, err := s.compute.RedactConfig(provider, config)
	if err != nil {
		// Without its provider's schema nothing says which values are
		// secret: show none of them.
		out, _ = json.Marshal("[redacted: provider " + provider + " is not enabled]")
	}
	return out
}

// renderPlacement is the API's view of a placement: secrets redacted.
func (s *Server) renderPlacement(p *tenant.Placement) wire.Placement {
	return wire.Placement{
		Name: p.Name, ComputeProvider: p.Provider, ComputeConfig: s.redacted(p.Provider, p.ComputeConfig),
		WorkloadID: p.WorkloadID, WorkloadName: p.WorkloadName, Removed: p.Removed,
		Status: string(p.Status), StatusMessage: p.StatusMessage, ObservedGeneration: p.ObservedGeneration,
		Attempts: p.Attempts, RetryAt: p.RetryAt, ResourceIDs: p.ResourceIDs, Endpoints: endpoints(p.Endpoints), Drift: wireDrift(p.Drift),
		Move: s.renderMove(p.Move),
	}
}

// renderMove is the API's view of a move: its other workload's secrets
// redacted; nil stays nil.
func (s *Server) renderMove(m *tenant.Move) *wire.Move {
	if m == nil {
		return nil
	}
	return &wire.Move{ID: m.ID, Step: string(m.Step), Hold: m.Hold, Approved: m.Approved, From: m.From, To: m.To,
		Other: s.renderPlacement(&m.Other), RequestedAt: m.RequestedAt, Actor: m.Actor, SwitchedAt: m.SwitchedAt, Plan: wirePlan(m.Plan)}
}

// placementRequests is the service's form of the placements of a request.
func placementRequests(in []wire.PlacementRequest) []service.PlacementRequest {
	if in == nil {
		return nil
	}
	out := make([]service.PlacementRequest, len(in))
	for i, p := range in {
		out[i] = service.PlacementRequest{Name: p.Name, ComputeConfig: p.ComputeConfig}
	}
	return out
}

// statusPlacement is the placement whose workload a status request asks
// about: the one its placement parameter names, which a tenant with
// placements needs.
func statusPlacement(r *http.Request, t *tenant.Tenant) (*tenant.Placement, error) {
	name := r.URL.Query().Get("placement")
	switch {
	case name == "" && len(t.Placements) == 1:
		return &t.Placements[0], nil
	case name == "":
		return nil, problem(http.StatusBadRequest, wire.CodeInvalidParameter,
			fmt.Sprintf("tenant %s has placements %s: name the one whose workload to read", t.Name, strings.Join(t.PlacementNames(), ", ")),
			wire.FieldError{Parameter: "placement", Message: "is required for a tenant with placements"})
	}
	if p := t.Placement(name); p != nil {
		return p, nil
	}
	return nil, unknownPlacement(t, name)
}

// unknownPlacement is the problem of a placement parameter that names no
// placement of t.
func unknownPlacement(t *tenant.Tenant, name string) error {
	return problem(http.StatusNotFound, wire.CodeNotFound, fmt.Sprintf("tenant %s has no placement %q; it has %s", t.Name, name, strings.Join(t.PlacementNames(), ", ")),
		wire.FieldError{Parameter: "placement", Message: "names no placement of the tenant"})
}

func (s *Server) writeTenant(w http.ResponseWriter, status int, t *tenant.Tenant) {
	w.Header().Set("ETag", etag(t.Version))
	writeJSON(w, status, s.render(t))
}

func etag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// parseIfMatch reads If-Match: "*", or a list of strong ETags. A weak ETag
// never matches (RFC 9110 13.1.1 compares strongly).
func parseIfMatch(r *http.Request) (service.Versions, error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h == "" || h == "*" {
		return nil, nil
	}
	var out service.Versions
	for _, tag := range strings.Split(h, ",") {
		tag = strings.TrimSpace(tag)
		if strings.HasPrefix(tag, "W/") {
			out = append(out, -1) // matches nothing
			continue
		}
		v, err := strconv.ParseInt(strings.Trim(tag, `"`), 10, 64)
		if err != nil || v <= 0 || len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' {
			return nil, problem(http.StatusBadRequest, wire.CodeInvalidParameter, fmt.Sprintf("If-Match %s is not a list of ETags this API returned", h),
				wire.FieldError{Parameter: "If-Match", Message: `must be "*" or ETags such as "3"`})
		}
		out = append(out, v)
	}
	return out, nil
}

func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, problem(http.StatusBadRequest, wire.CodeInvalidParameter, fmt.Sprintf("%s=%q is not true or false", name, v),
			wire.FieldError{Parameter: name, Message: "must be true or false"})
	}
	return b, nil
}

// The values of the order parameter of a tenant's history.
const (
	orderOldest = "oldest"
	orderNewest = "newest"
)

// eventOrder reports whether the order parameter asks for the newest
// events first.
func eventOrder(r *http.Request) (bool, error) {
	switch v := r.URL.Query().Get("order"); v {
	case "", orderOldest:
		return false, nil
	case orderNewest:
		return true, nil
	default:
		return false, problem(http.StatusBadRequest, wire.CodeInvalidParameter, fmt.Sprintf("order=%q is not %s or %s", v, orderOldest, orderNewest),
			wire.FieldError{Parameter: "order", Message: fmt.Sprintf("must be %s or %s", orderOldest, orderNewest)})
	}
}

func pageSize(r *http.Request) (int, error) {
	v := r.URL.Query().Get("page_size")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > tenant.MaxPageSize {
		return 0, problem(http.StatusBadRequest, wire.CodeInvalidParameter, fmt.Sprintf("page_size=%q is not a number from 1 to %d", v, tenant.MaxPageSize),
			wire.FieldError{Parameter: "page_size", Message: fmt.Sprintf("must be from 1 to %d", tenant.MaxPageSize)})
	}
	return n, nil
}
