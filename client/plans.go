package client

import (
	"context"
	"strconv"
)

// Plans is the plans resource of the API: named lines of compute config
// versions that tenants follow.
type Plans struct {
	c *Client
}

// Plans is the plans resource.
func (c *Client) Plans() *Plans { return &Plans{c: c} }

// CreatePlanOptions modify a plan's create.
type CreatePlanOptions struct {
	// IdempotencyKey makes retries safe: the same key and body within 24
	// hours get the first answer again, rather than a 409 for the plan the
	// first request made.
	IdempotencyKey string
}

// Create creates a plan, without versions. A taken name is a 409 *Error
// (code plan_exists).
func (s *Plans) Create(ctx context.Context, req CreatePlanRequest, opts CreatePlanOptions) (*Plan, error) {
	var out Plan
	if err := s.c.do(ctx, request{method: "POST", path: "/v1/plans", header: idempotencyHeader(opts.IdempotencyKey), body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List lists every plan.
func (s *Plans) List(ctx context.Context) (*PlanList, error) {
	var out PlanList
	if err := s.c.do(ctx, request{method: "GET", path: "/v1/plans"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get returns a plan; an unknown one is a 404 *Error.
func (s *Plans) Get(ctx context.Context, name string) (*Plan, error) {
	path, err := planPath(name)
	if err != nil {
		return nil, err
	}
	var out Plan
	if err := s.c.do(ctx, request{method: "GET", path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete deletes a plan and its versions. A plan that tenants follow, or
// whose rollout has not finished, is a 409 *Error (code plan_in_use).
func (s *Plans) Delete(ctx context.Context, name string) error {
	path, err := planPath(name)
	if err != nil {
		return err
	}
	return s.c.do(ctx, request{method: "DELETE", path: path}, nil)
}

// PublishOptions modify a publish.
type PublishOptions struct {
	// IdempotencyKey makes retries safe: the same key and body within 24
	// hours get the first answer again, without publishing another version.
	IdempotencyKey string
}

// Publish publishes the plan's next version. A config the plan's provider
// refuses is a 422 *Error with a pointer per violation.
func (s *Plans) Publish(ctx context.Context, name string, req PublishVersionRequest, opts PublishOptions) (*PlanVersion, error) {
	path, err := planPath(name, "/versions")
	if err != nil {
		return nil, err
	}
	var out PlanVersion
	if err := s.c.do(ctx, request{method: "POST", path: path, header: idempotencyHeader(opts.IdempotencyKey), body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Versions lists the plan's versions, oldest first.
func (s *Plans) Versions(ctx context.Context, name string) (*PlanVersionList, error) {
	path, err := planPath(name, "/versions")
	if err != nil {
		return nil, err
	}
	var out PlanVersionList
	if err := s.c.do(ctx, request{method: "GET", path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Version returns one version of the plan; an unknown one is a 404 *Error.
func (s *Plans) Version(ctx context.Context, name string, version int64) (*PlanVersion, error) {
	path, err := planPath(name, "/versions/"+strconv.FormatInt(version, 10))
	if err != nil {
		return nil, err
	}
	var out PlanVersion
	if err := s.c.do(ctx, request{method: "GET", path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// planPath is the escaped path of a plan.
func planPath(name string, rest ...string) (string, error) {
	return resourcePath("/v1/plans/", "a plan name", name, rest...)
}
