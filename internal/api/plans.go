package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

func (s *Server) createPlan(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.NeedFleet(); err != nil {
		return err
	}
	var req wire.CreatePlanRequest
	held, answered, err := s.readIdempotent(w, r, &req)
	if err != nil || answered {
		return err
	}
	defer s.releaseIdempotent(r, held)
	p := &fleet.Plan{Name: req.Name, Provider: req.Provider, Description: req.Description}
	return keepResponse(s, w, r, held,
		func(keep *service.Keep[*fleet.Plan]) (*fleet.Plan, error) {
			return s.svc.CreatePlan(r.Context(), p, actor(r), keep)
		},
		func(p *fleet.Plan) tenant.IdempotentResponse {
			return created(renderPlan(p), map[string]string{"Location": "/v1/plans/" + p.Name})
		})
}

func (s *Server) listPlans(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.NeedFleet(); err != nil {
		return err
	}
	plans, err := s.fleet.ListPlans(r.Context())
	if err != nil {
		return err
	}
	out := wire.PlanList{Plans: make([]wire.Plan, len(plans))}
	for i, p := range plans {
		out.Plans[i] = renderPlan(p)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getPlanRoute(w http.ResponseWriter, r *http.Request) error {
	p, err := s.svc.GetPlan(r.Context(), r.PathValue("plan"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderPlan(p))
	return nil
}

func (s *Server) deletePlan(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.DeletePlan(r.Context(), r.PathValue("plan")); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) publishVersion(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.NeedFleet(); err != nil {
		return err
	}
	// A retry publishes no second version: the version and the response
	// a retry gets commit together.
	var req wire.PublishVersionRequest
	held, answered, err := s.readIdempotent(w, r, &req)
	if err != nil || answered {
		return err
	}
	defer s.releaseIdempotent(r, held)
	in := service.NewVersion{Plan: r.PathValue("plan"), Config: req.Config, Message: req.Message}
	err = keepResponse(s, w, r, held,
		func(keep *service.Keep[*fleet.Version]) (*fleet.Version, error) {
			return s.svc.PublishVersion(r.Context(), in, actor(r), keep)
		},
		func(v *fleet.Version) tenant.IdempotentResponse {
			return created(renderVersion(v), map[string]string{"Location": fmt.Sprintf("/v1/plans/%s/versions/%d", v.Plan, v.Version)})
		})
	if errors.Is(err, service.ErrStoreRefused) {
		// Its words are for the log, not the client.
		s.log.WarnContext(r.Context(), "the store refused a plan version the API accepted", slog.String("request_id", requestID(r)), slog.Any("error", err))
	}
	return err
}

func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) error {
	versions, err := s.svc.ListVersions(r.Context(), r.PathValue("plan"))
	if err != nil {
		return err
	}
	out := wire.PlanVersionList{Versions: make([]wire.PlanVersion, len(versions))}
	for i, v := range versions {
		out.Versions[i] = renderVersion(v)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getVersionRoute(w http.ResponseWriter, r *http.Request) error {
	p, err := s.svc.GetPlan(r.Context(), r.PathValue("plan"))
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(r.PathValue("version"), 10, 64)
	if err != nil || n < 1 {
		return problem(http.StatusNotFound, wire.CodePlanVersionNotFound, fmt.Sprintf("%s is not a version number; plan %s has versions 1 to %d",
			wire.Quote(r.PathValue("version")), p.Name, p.Latest))
	}
	v, err := s.svc.GetVersion(r.Context(), p, n)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderVersion(v))
	return nil
}

func renderPlan(p *fleet.Plan) wire.Plan {
	return wire.Plan{Name: p.Name, Provider: p.Provider, Description: p.Description, LatestVersion: p.Latest, CurrentVersion: p.Current,
		CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func renderVersion(v *fleet.Version) wire.PlanVersion {
	return wire.PlanVersion{Plan: v.Plan, Version: v.Version, Config: v.Config, Message: v.Message, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
}
