package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// maxRolloutEvents is the most events one page of a rollout's history holds.
const maxRolloutEvents = tenant.MaxPageSize

func (s *Server) listRollouts(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.NeedFleet(); err != nil {
		return err
	}
	active, err := boolParam(r, "active")
	if err != nil {
		return err
	}
	rollouts, err := s.fleet.ListRollouts(r.Context(), fleet.RolloutListOptions{Plan: r.URL.Query().Get("plan"), Active: active})
	if err != nil {
		return err
	}
	out := wire.RolloutList{Rollouts: make([]wire.Rollout, len(rollouts))}
	for i, ro := range rollouts {
		sum, err := fleet.SummarizeMembers(r.Context(), s.fleet, ro.ID)
		switch {
		case errors.Is(err, fleet.ErrNotFound): // deleted meanwhile: shown without members
			sum = fleet.Summarize(nil)
		case err != nil:
			return err
		}
		out.Rollouts[i] = renderRollout(ro, sum, nil)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getRolloutRoute(w http.ResponseWriter, r *http.Request) error {
	ro, err := s.svc.GetRollout(r.Context(), r.PathValue("rollout"))
	if err != nil {
		return err
	}
	return s.writeRollout(w, r, http.StatusOK, ro)
}

// writeRollout answers with the rollout, its members' counts and the
// members waiting for their windows, and its version as ETag.
func (s *Server) writeRollout(w http.ResponseWriter, r *http.Request, status int, ro *fleet.Rollout) error {
	members, err := s.fleet.Members(r.Context(), ro.ID)
	if err != nil {
		return service.RolloutError(err, ro.ID)
	}
	waiting, err := s.svc.Waiting(r.Context(), ro, members)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(ro.Version))
	writeJSON(w, status, renderRollout(ro, fleet.Summarize(members), renderWaiting(waiting)))
	return nil
}

// renderWaiting is the wire form of the members waiting for their windows.
func renderWaiting(waiting []service.Waiting) []wire.WaitingTenant {
	var out []wire.WaitingTenant
	for _, w := range waiting {
		out = append(out, wire.WaitingTenant{TenantID: w.TenantID, TenantName: w.TenantName, OpensAt: w.OpensAt})
	}
	return out
}

func (s *Server) listMembers(w http.ResponseWriter, r *http.Request) error {
	ro, err := s.svc.GetRollout(r.Context(), r.PathValue("rollout"))
	if err != nil {
		return err
	}
	members, err := s.fleet.Members(r.Context(), ro.ID)
	if err != nil {
		return service.RolloutError(err, ro.ID)
	}
	out := wire.RolloutMemberList{Members: make([]wire.RolloutMember, len(members))}
	for i, m := range members {
		out.Members[i] = wire.RolloutMember{TenantID: m.TenantID, TenantName: m.TenantName, Wave: m.Wave, WaveName: waveName(ro, m.Wave),
			State: string(m.State), FromVersion: m.From, Generation: m.Generation, ChangedAt: m.ChangedAt, FinishedAt: m.FinishedAt, Message: m.Message}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) listRolloutEvents(w http.ResponseWriter, r *http.Request) error {
	ro, err := s.svc.GetRollout(r.Context(), r.PathValue("rollout"))
	if err != nil {
		return err
	}
	var after int64
	if v := r.URL.Query().Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return problem(http.StatusBadRequest, wire.CodeInvalidParameter, fmt.Sprintf("after=%s is not an event's seq", wire.Quote(v)),
				wire.FieldError{Parameter: "after", Message: "must be a number from 0: the seq of the last event read"})
		}
	}
	size, err := pageSize(r)
	if err != nil {
		return err
	}
	if size == 0 {
		size = maxRolloutEvents
	}
	events, err := s.fleet.ListRolloutEvents(r.Context(), ro.ID, after, size)
	if err != nil {
		return service.RolloutError(err, ro.ID)
	}
	out := wire.RolloutEventList{Events: make([]wire.RolloutEvent, len(events))}
	for i, e := range events {
		out.Events[i] = wire.RolloutEvent{Seq: e.Seq, Time: e.Time, Type: string(e.Type), TenantID: e.TenantID, TenantName: e.TenantName,
			Wave: e.Wave, Message: e.Message, Actor: e.Actor}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) pauseRollout(w http.ResponseWriter, r *http.Request) error {
	return s.act(w, r, func(ro *fleet.Rollout, _ []fleet.Member, now time.Time) (*fleet.Rollout, fleet.Event, error) {
		return fleet.Pause(ro, actor(r), now)
	}, false)
}

func (s *Server) resumeRollout(w http.ResponseWriter, r *http.Request) error {
	return s.act(w, r, func(ro *fleet.Rollout, _ []fleet.Member, now time.Time) (*fleet.Rollout, fleet.Event, error) {
		return fleet.Resume(ro, actor(r), now)
	}, false)
}

func (s *Server) abortRollout(w http.ResponseWriter, r *http.Request) error {
	var req wire.AbortRolloutRequest
	if err := s.readOptional(w, r, &req); err != nil {
		return err
	}
	return s.act(w, r, func(ro *fleet.Rollout, members []fleet.Member, now time.Time) (*fleet.Rollout, fleet.Event, error) {
		return fleet.Abort(ro, members, req.Rollback, actor(r), now)
	}, true)
}

// act applies an action to the rollout the path names (see
// service.ActOnRollout) and answers with the rollout.
func (s *Server) act(w http.ResponseWriter, r *http.Request, action func(*fleet.Rollout, []fleet.Member, time.Time) (*fleet.Rollout, fleet.Event, error), needMembers bool) error {
	expect, err := parseIfMatch(r)
	if err != nil {
		return err
	}
	updated, err := s.svc.ActOnRollout(r.Context(), service.RolloutAction{Rollout: r.PathValue("rollout"), Expect: expect, NeedMembers: needMembers, Do: action})
	if err != nil {
		return err
	}
	return s.writeRollout(w, r, http.StatusOK, updated)
}

func waveName(ro *fleet.Rollout, i int) string {
	if i >= 0 && i < len(ro.Waves) {
		return ro.Waves[i].Name
	}
	return ""
}

func counts(c fleet.Counts) map[string]int {
	out := make(map[string]int, len(c))
	for state, n := range c {
		out[string(state)] = n
	}
	return out
}

// renderRollout is the API's view of a rollout and its members.
func renderRollout(ro *fleet.Rollout, members *fleet.Summary, waiting []wire.WaitingTenant) wire.Rollout {
	deadline := ro.Spec.Deadline
	if deadline == 0 {
		deadline = fleet.DefaultDeadline
	}
	out := wire.Rollout{
		ID: ro.ID, Plan: ro.Spec.Plan, FromVersion: ro.Spec.From, ToVersion: ro.Spec.To, ToPlan: ro.Spec.ToPlan, ToProvider: ro.Spec.ToProvider, State: string(ro.State),
		Wave: ro.Wave, WaveName: waveName(ro, ro.Wave), Waves: make([]wire.RolloutWave, len(ro.Waves)),
		Bake: ro.Spec.Bake.String(), Deadline: deadline.String(), MaxFailures: ro.Spec.MaxFailures,
		Counts: counts(members.Total()), Failed: members.Failed, Waiting: waiting,
		BakeFrom: ro.BakeFrom, Rollback: ro.Rollback, Message: ro.Message, Version: ro.Version,
		CreatedBy: ro.CreatedBy, CreatedAt: ro.CreatedAt, UpdatedAt: ro.UpdatedAt, FinishedAt: ro.FinishedAt,
	}
	for i, wv := range ro.Waves {
		out.Waves[i] = wire.RolloutWave{Name: wv.Name, Selector: wv.Selector, Count: wv.Count, Percent: wv.Percent, MaxInFlight: wv.MaxInFlight,
			Size: wv.Size, Counts: counts(members.ByWave[i])}
	}
	return out
}
