package api

import (
	"net/http"

	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// moveTenant starts the move of a tenant's placement to another provider
// (or place): make-before-break, carried out by the controller (see
// tenant.Move). It answers 202 with the tenant, its move in progress.
func (s *Server) moveTenant(w http.ResponseWriter, r *http.Request) error {
	var req wire.MoveRequest
	body, err := s.readRaw(w, r, contentJSON)
	if err != nil {
		return err
	}
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	return s.move(w, r, service.MoveRequest{Kind: tenant.MoveStart, Placement: req.Placement, ComputeConfig: req.ComputeConfig, Plan: planChoice(req.Plan), Hold: req.Hold})
}

// approveMove lets a move that holds for an approval switch.
func (s *Server) approveMove(w http.ResponseWriter, r *http.Request) error {
	return s.moveAction(w, r, tenant.MoveApprove)
}

// cancelMove cancels a move before its switch: its target is destroyed,
// and the source serves on.
func (s *Server) cancelMove(w http.ResponseWriter, r *http.Request) error {
	return s.moveAction(w, r, tenant.MoveCancel)
}

// moveAction reads the body of an approval or a cancel (optional: a
// tenant of one placement needs none) and applies it.
func (s *Server) moveAction(w http.ResponseWriter, r *http.Request, kind tenant.MoveKind) error {
	var req wire.MoveActionRequest
	if err := s.readOptional(w, r, &req); err != nil {
		return err
	}
	return s.move(w, r, service.MoveRequest{Kind: kind, Placement: req.Placement})
}

// move applies a move request to the tenant the path names.
func (s *Server) move(w http.ResponseWriter, r *http.Request, m service.MoveRequest) error {
	expect, err := parseIfMatch(r)
	if err != nil {
		return err
	}
	m.Tenant, m.Expect, m.Actor = r.PathValue("tenant"), expect, actor(r)
	m.Seen = func(t *tenant.Tenant) { noteTenant(r, t.ID) }
	out, err := s.svc.MoveTenant(r.Context(), m)
	if err != nil {
		return err
	}
	s.writeTenant(w, http.StatusAccepted, out)
	return nil
}
