package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/violation"
)

func (s *Server) createPlan(w http.ResponseWriter, r *http.Request) error {
	if err := s.needFleet(); err != nil {
		return err
	}
	var req CreatePlanRequest
	held, answered, err := s.readIdempotent(w, r, &req)
	if err != nil || answered {
		return err
	}
	defer s.releaseIdempotent(r, held)
	p := &fleet.Plan{Name: req.Name, Provider: req.Provider, Description: req.Description}
	if p.Provider == "" {
		p.Provider = s.compute.DefaultProvider()
	}
	errs := violation.List(violation.Of(fleet.ValidatePlan(p)))
	if strings.ContainsRune(p.Description, 0) {
		errs.Add("/description", "%s", mustNotHoldNUL)
	}
	if err := errs.Err(fleet.ErrInvalid); err != nil {
		return err
	}
	if _, err := s.compute.Registry().Get(p.Provider); err != nil {
		return withFields(err, fmt.Sprintf("provider %s is not enabled on this server", p.Provider), FieldError{Pointer: "/provider", Message: err.Error()})
	}
	return writeKept(s, w, r, held,
		func() (*fleet.Plan, error) { return s.fleet.CreatePlan(r.Context(), p, actor(r)) },
		func(res tenant.IdempotentResponse, respond func(*fleet.Plan) (tenant.IdempotentResponse, error)) (*fleet.Plan, error) {
			return s.fleetIdem.CreatePlanIdempotent(r.Context(), p, actor(r), res, respond)
		},
		func(p *fleet.Plan) tenant.IdempotentResponse {
			return created(renderPlan(p), map[string]string{"Location": "/v1/plans/" + p.Name})
		})
}

func (s *Server) listPlans(w http.ResponseWriter, r *http.Request) error {
	if err := s.needFleet(); err != nil {
		return err
	}
	plans, err := s.fleet.ListPlans(r.Context())
	if err != nil {
		return err
	}
	out := PlanList{Plans: make([]Plan, len(plans))}
	for i, p := range plans {
		out.Plans[i] = renderPlan(p)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getPlanRoute(w http.ResponseWriter, r *http.Request) error {
	p, err := s.getPlan(r.Context(), r.PathValue("plan"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderPlan(p))
	return nil
}

func (s *Server) deletePlan(w http.ResponseWriter, r *http.Request) error {
	p, err := s.getPlan(r.Context(), r.PathValue("plan"))
	if err != nil {
		return err
	}
	err = s.fleet.DeletePlan(r.Context(), p.Name)
	switch {
	case errors.Is(err, fleet.ErrNotFound):
		return planNotFound(p.Name)
	case errors.Is(err, fleet.ErrInUse):
		return s.planInUse(r.Context(), p.Name)
	case err != nil:
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// planInUse says what keeps a plan from being deleted, and what to do.
func (s *Server) planInUse(ctx context.Context, name string) error {
	var why []string
	if page, err := s.store.List(ctx, tenant.ListOptions{Plan: name, PageSize: 6}); err == nil && len(page.Tenants) > 0 {
		names := make([]string, 0, 5)
		for _, t := range page.Tenants[:min(5, len(page.Tenants))] {
			names = append(names, t.Name)
		}
		if len(page.Tenants) > 5 || page.NextPageToken != "" {
			names = append(names, "…")
		}
		why = append(why, fmt.Sprintf("tenants follow it (%s; GET /v1/tenants?plan=%s lists them): move each to another plan or off plans with PATCH {\"plan\": null}",
			strings.Join(names, ", "), name))
	}
	if active, err := s.fleet.ListRollouts(ctx, fleet.RolloutListOptions{Plan: name, Active: true}); err == nil && len(active) > 0 {
		why = append(why, fmt.Sprintf("rollout %s of it is %s: let it finish, or abort it with POST /v1/rollouts/%s/abort", active[0].ID, active[0].State, active[0].ID))
	}
	if len(why) == 0 {
		return fmt.Errorf("api: delete plan %s: %w", name, fleet.ErrInUse) // the table's words
	}
	return problem(http.StatusConflict, CodePlanInUse, fmt.Sprintf("plan %s is in use: %s; then delete it", name, strings.Join(why, "; and ")))
}

func (s *Server) publishVersion(w http.ResponseWriter, r *http.Request) error {
	if err := s.needFleet(); err != nil {
		return err
	}
	// A retry publishes no second version: the version and the response
	// a retry gets commit together.
	var req PublishVersionRequest
	held, answered, err := s.readIdempotent(w, r, &req)
	if err != nil || answered {
		return err
	}
	defer s.releaseIdempotent(r, held)
	p, err := s.getPlan(r.Context(), r.PathValue("plan"))
	if err != nil {
		return err
	}
	var errs violation.List
	if err := requireObjectAt(req.Config, "/config"); err != nil {
		return err
	}
	if at := jsonscan.NULAt(req.Config, "/config"); at != "" {
		errs.Add(at, "%s", mustNotHoldNUL)
	}
	if len(req.Message) > fleet.MaxDescription {
		errs.Add("/message", "must be at most %d bytes", fleet.MaxDescription)
	}
	if strings.ContainsRune(req.Message, 0) {
		errs.Add("/message", "%s", mustNotHoldNUL)
	}
	if err := s.compute.CheckPlanConfig(p.Provider, req.Config); err != nil {
		if !errors.Is(err, compute.ErrInvalidSpec) {
			return withFields(err, fmt.Sprintf("plan %s is for provider %s, which is not enabled on this server", p.Name, p.Provider))
		}
		for _, v := range violation.Of(err) {
			errs.Add("/config"+v.Pointer, "%s", v.Message)
		}
	}
	if len(errs) > 0 {
		fields := make([]FieldError, len(errs))
		for i, v := range errs {
			fields[i] = FieldError{Pointer: v.Pointer, Message: v.Message}
		}
		return problem(http.StatusUnprocessableEntity, CodeInvalidComputeConfig,
			fmt.Sprintf("the config is not valid for provider %s, the plan's", p.Provider), sortErrors(fields)...)
	}
	err = writeKept(s, w, r, held,
		func() (*fleet.Version, error) {
			return s.fleet.PublishVersion(r.Context(), p.Name, req.Config, req.Message, actor(r))
		},
		func(res tenant.IdempotentResponse, respond func(*fleet.Version) (tenant.IdempotentResponse, error)) (*fleet.Version, error) {
			return s.fleetIdem.PublishVersionIdempotent(r.Context(), p.Name, req.Config, req.Message, actor(r), res, respond)
		},
		func(v *fleet.Version) tenant.IdempotentResponse {
			return created(renderVersion(v), map[string]string{"Location": fmt.Sprintf("/v1/plans/%s/versions/%d", v.Plan, v.Version)})
		})
	switch {
	case errors.Is(err, fleet.ErrNotFound):
		return planNotFound(p.Name) // deleted meanwhile
	case errors.Is(err, fleet.ErrInvalid) && len(violation.Of(err)) == 0:
		// The store refused what the checks above let through: its words
		// are for the log, not the client.
		s.log.WarnContext(r.Context(), "the store refused a plan version the API accepted", slog.String("request_id", requestID(r)), slog.Any("error", err))
		return problem(http.StatusUnprocessableEntity, CodeInvalidComputeConfig,
			fmt.Sprintf("the store refused this version of plan %s; landlord's log has the cause under this request's id", p.Name),
			FieldError{Pointer: "/config", Message: "was refused by the store"})
	}
	return err
}

func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) error {
	p, err := s.getPlan(r.Context(), r.PathValue("plan"))
	if err != nil {
		return err
	}
	versions, err := s.fleet.ListVersions(r.Context(), p.Name)
	if errors.Is(err, fleet.ErrNotFound) {
		return planNotFound(p.Name)
	}
	if err != nil {
		return err
	}
	out := PlanVersionList{Versions: make([]PlanVersion, len(versions))}
	for i, v := range versions {
		out.Versions[i] = renderVersion(v)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getVersionRoute(w http.ResponseWriter, r *http.Request) error {
	p, err := s.getPlan(r.Context(), r.PathValue("plan"))
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(r.PathValue("version"), 10, 64)
	if err != nil || n < 1 {
		return problem(http.StatusNotFound, CodePlanVersionNotFound, fmt.Sprintf("%s is not a version number; plan %s has versions 1 to %d",
			violation.Quote(r.PathValue("version")), p.Name, p.Latest))
	}
	v, err := s.getVersion(r.Context(), p, n)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderVersion(v))
	return nil
}

// getPlan reads a plan; a missing one is a 404 plan_not_found.
func (s *Server) getPlan(ctx context.Context, name string) (*fleet.Plan, error) {
	if err := s.needFleet(); err != nil {
		return nil, err
	}
	p, err := s.fleet.GetPlan(ctx, name)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, planNotFound(name)
	}
	return p, err
}

// getVersion reads a version of p; a missing one is a 404
// plan_version_not_found.
func (s *Server) getVersion(ctx context.Context, p *fleet.Plan, n int64) (*fleet.Version, error) {
	v, err := s.fleet.GetVersion(ctx, p.Name, n)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, versionNotFound(p, n)
	}
	return v, err
}

func planNotFound(name string) error {
	return problem(http.StatusNotFound, CodePlanNotFound, fmt.Sprintf("there is no plan %s; GET /v1/plans lists the plans", violation.Quote(name)))
}

func versionNotFound(p *fleet.Plan, n int64) error {
	detail := fmt.Sprintf("plan %s has no version %d; it has versions 1 to %d", p.Name, n, p.Latest)
	if p.Latest == 0 {
		detail = fmt.Sprintf("plan %s has no version %d; it has none yet (publish one with POST /v1/plans/%s/versions)", p.Name, n, p.Name)
	}
	return problem(http.StatusNotFound, CodePlanVersionNotFound, detail)
}

// requireObjectAt checks that a member is present and a JSON object.
func requireObjectAt(raw json.RawMessage, at string) error {
	c := strings.TrimSpace(string(raw))
	switch {
	case c == "" || c == "null":
		return problem(http.StatusBadRequest, CodeInvalidBody, at[1:]+" is required", FieldError{Pointer: at, Message: "is required"})
	case c[0] != '{':
		return problem(http.StatusBadRequest, CodeInvalidBody, at[1:]+" must be a JSON object", FieldError{Pointer: at, Message: "must be an object"})
	}
	return nil
}

// mustNotHoldNUL is the message for text that holds U+0000.
const mustNotHoldNUL = "must not contain the character U+0000"

func renderPlan(p *fleet.Plan) Plan {
	return Plan{Name: p.Name, Provider: p.Provider, Description: p.Description, LatestVersion: p.Latest, CurrentVersion: p.Current,
		CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func renderVersion(v *fleet.Version) PlanVersion {
	return PlanVersion{Plan: v.Plan, Version: v.Version, Config: v.Config, Message: v.Message, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
}
