package client

import (
	"context"
	"net/url"
	"strconv"
)

// Rollouts is the rollouts resource of the API: moving a plan's tenants
// from one version to another in waves.
type Rollouts struct {
	c *Client
}

// Rollouts is the rollouts resource.
func (c *Client) Rollouts() *Rollouts { return &Rollouts{c: c} }

// RolloutListOptions filter a list of rollouts. Zero values do not filter.
type RolloutListOptions struct {
	// Plan keeps the rollouts of this plan.
	Plan string
	// Active keeps the rollouts that have not finished (running, paused,
	// halted or aborting).
	Active bool
}

// ActionOptions modify a pause, resume or abort.
type ActionOptions struct {
	// IfMatch, when not 0, is the rollout version the action is meant for:
	// if the rollout changed since, the action is refused with a 412
	// *Error.
	IfMatch int64
}

// Plan answers what a rollout of req would do, tenant by tenant (the fleet
// plan), and starts nothing. A version that a tenant's own overrides do not
// validate with is a 422 *Error naming the tenant.
func (s *Rollouts) Plan(ctx context.Context, req CreateRolloutRequest) (*FleetPlan, error) {
	var out FleetPlan
	q := url.Values{"dry_run": {"true"}}
	if err := s.c.do(ctx, request{method: "POST", path: "/v1/rollouts", query: q, body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StartOptions modify a rollout's start.
type StartOptions struct {
	// IdempotencyKey makes retries safe: the same key and body within 24
	// hours get the first answer again, without starting another rollout.
	IdempotencyKey string
}

// Start starts a rollout; the server's elected controller then drives it.
// A plan with a rollout that has not finished is a 409 *Error.
func (s *Rollouts) Start(ctx context.Context, req CreateRolloutRequest, opts StartOptions) (*Rollout, error) {
	var out Rollout
	if err := s.c.do(ctx, request{method: "POST", path: "/v1/rollouts", header: idempotencyHeader(opts.IdempotencyKey), body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List lists rollouts, newest first.
func (s *Rollouts) List(ctx context.Context, opts RolloutListOptions) (*RolloutList, error) {
	q := url.Values{}
	setNonEmpty(q, "plan", opts.Plan)
	if opts.Active {
		q.Set("active", "true")
	}
	var out RolloutList
	if err := s.c.do(ctx, request{method: "GET", path: "/v1/rollouts", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get returns a rollout and where it stands, with the members of its wave
// in progress that wait for their maintenance windows; an unknown one is a
// 404 *Error.
func (s *Rollouts) Get(ctx context.Context, id string) (*Rollout, error) {
	path, err := rolloutPath(id)
	if err != nil {
		return nil, err
	}
	var out Rollout
	if err := s.c.do(ctx, request{method: "GET", path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Members lists a rollout's tenants and their states, in wave order.
func (s *Rollouts) Members(ctx context.Context, id string) (*RolloutMemberList, error) {
	path, err := rolloutPath(id, "/members")
	if err != nil {
		return nil, err
	}
	var out RolloutMemberList
	if err := s.c.do(ctx, request{method: "GET", path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Events returns a page of a rollout's history, oldest first: the events
// after seq after (0 from the start), at most pageSize of them (0 means the
// server's most, 500).
func (s *Rollouts) Events(ctx context.Context, id string, after int64, pageSize int) (*RolloutEventList, error) {
	path, err := rolloutPath(id, "/events")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if pageSize > 0 {
		q.Set("page_size", strconv.Itoa(pageSize))
	}
	var out RolloutEventList
	if err := s.c.do(ctx, request{method: "GET", path: path, query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Pause pauses a running rollout: it changes no more tenants until
// resumed. A rollout in another state is a 409 *Error (code
// rollout_state).
func (s *Rollouts) Pause(ctx context.Context, id string, opts ActionOptions) (*Rollout, error) {
	return s.act(ctx, id, "/pause", nil, opts)
}

// Resume resumes a paused or halted rollout.
func (s *Rollouts) Resume(ctx context.Context, id string, opts ActionOptions) (*Rollout, error) {
	return s.act(ctx, id, "/resume", nil, opts)
}

// Abort ends a rollout; with rollback, the tenants it changed go back to
// the versions they had.
func (s *Rollouts) Abort(ctx context.Context, id string, rollback bool, opts ActionOptions) (*Rollout, error) {
	return s.act(ctx, id, "/abort", AbortRolloutRequest{Rollback: rollback}, opts)
}

func (s *Rollouts) act(ctx context.Context, id, action string, body any, opts ActionOptions) (*Rollout, error) {
	path, err := rolloutPath(id, action)
	if err != nil {
		return nil, err
	}
	var out Rollout
	if err := s.c.do(ctx, request{method: "POST", path: path, header: ifMatchHeader(opts.IfMatch), body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// rolloutPath is the escaped path of a rollout.
func rolloutPath(id string, rest ...string) (string, error) {
	return resourcePath("/v1/rollouts/", "a rollout id", id, rest...)
}
