package client

import (
	"context"

	"github.com/jaxxstorm/landlord/internal/wire"
)

type (
	// Move is a placement's move in progress.
	Move = wire.Move
	// MoveRequest asks for a move of a placement: its config on the
	// target, whose compute_provider names the target provider.
	MoveRequest = wire.MoveRequest
	// MoveActionRequest names the placement whose move to approve or
	// cancel.
	MoveActionRequest = wire.MoveActionRequest
)

// Move starts the move of a tenant's placement to another provider (or
// place), make-before-break, and returns the tenant with its move in
// progress: the controller provisions the target beside the source, waits
// until it runs and its endpoints answer (and, with Hold, for
// ApproveMove), switches the placement to it and destroys the source.
func (s *Tenants) Move(ctx context.Context, idOrName string, req MoveRequest, opts UpdateOptions) (*Tenant, error) {
	return s.moveAction(ctx, idOrName, "", req, opts)
}

// ApproveMove lets a move that holds for an approval switch once its
// target runs and answers. placement may be "" for a tenant of one.
func (s *Tenants) ApproveMove(ctx context.Context, idOrName, placement string, opts UpdateOptions) (*Tenant, error) {
	return s.moveAction(ctx, idOrName, "/approve", MoveActionRequest{Placement: placement}, opts)
}

// CancelMove cancels a move before its switch: its target is destroyed,
// the source serves on. placement may be "" for a tenant of one.
func (s *Tenants) CancelMove(ctx context.Context, idOrName, placement string, opts UpdateOptions) (*Tenant, error) {
	return s.moveAction(ctx, idOrName, "/cancel", MoveActionRequest{Placement: placement}, opts)
}

func (s *Tenants) moveAction(ctx context.Context, idOrName, action string, body any, opts UpdateOptions) (*Tenant, error) {
	if err := noDryRun(opts, "moves"); err != nil {
		return nil, err
	}
	path, err := pathFor(idOrName)
	if err != nil {
		return nil, err
	}
	var out Tenant
	req := request{method: "POST", path: path + "/move" + action, header: ifMatchHeader(opts.IfMatch), body: body, contentType: "application/json"}
	if err := s.c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
