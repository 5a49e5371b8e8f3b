package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// MustNotHoldNUL is the message for text that holds U+0000.
const MustNotHoldNUL = "must not contain the character U+0000"

// CreatePlan checks a new plan (its name and description, and that its
// provider, the default one when it names none, is enabled) and stores it
// as actor's. keep, if set, keeps the response to an idempotent request
// with the plan.
func (s *Service) CreatePlan(ctx context.Context, p *fleet.Plan, actor string, keep *Keep[*fleet.Plan]) (*fleet.Plan, error) {
	if err := s.NeedFleet(); err != nil {
		return nil, err
	}
	p.Provider = cmp.Or(p.Provider, s.compute.DefaultProvider())
	errs := violation.List(violation.Of(fleet.ValidatePlan(p)))
	if strings.ContainsRune(p.Description, 0) {
		errs.Add("/description", "%s", MustNotHoldNUL)
	}
	if err := errs.Err(fleet.ErrInvalid); err != nil {
		return nil, err
	}
	if _, err := s.compute.Registry().Get(p.Provider); err != nil {
		return nil, reword(err, fmt.Sprintf("provider %s is not enabled on this server", p.Provider), Field{Pointer: "/provider", Message: err.Error()})
	}
	if keep != nil {
		return s.fleetIdem.CreatePlanIdempotent(ctx, p, actor, keep.Reservation, keep.Respond)
	}
	return s.fleet.CreatePlan(ctx, p, actor)
}

// GetPlan reads a plan; a missing one is KindNotFound plan_not_found.
func (s *Service) GetPlan(ctx context.Context, name string) (*fleet.Plan, error) {
	if err := s.NeedFleet(); err != nil {
		return nil, err
	}
	p, err := s.fleet.GetPlan(ctx, name)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, planNotFound(name)
	}
	return p, err
}

// GetVersion reads version n of p; a missing one is KindNotFound
// plan_version_not_found.
func (s *Service) GetVersion(ctx context.Context, p *fleet.Plan, n int64) (*fleet.Version, error) {
	v, err := s.fleet.GetVersion(ctx, p.Name, n)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, VersionNotFound(p, n)
	}
	return v, err
}

// ListVersions lists the versions of plan name, oldest first.
func (s *Service) ListVersions(ctx context.Context, name string) ([]*fleet.Version, error) {
	p, err := s.GetPlan(ctx, name)
	if err != nil {
		return nil, err
	}
	versions, err := s.fleet.ListVersions(ctx, p.Name)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, planNotFound(p.Name)
	}
	return versions, err
}

func planNotFound(name string) error {
	return refuse(KindNotFound, wire.CodePlanNotFound, fmt.Sprintf("there is no plan %s; GET /v1/plans lists the plans", wire.Quote(name)))
}

// VersionNotFound is the refusal of a version n that plan p does not have.
func VersionNotFound(p *fleet.Plan, n int64) error {
	detail := fmt.Sprintf("plan %s has no version %d; it has versions 1 to %d", p.Name, n, p.Latest)
	if p.Latest == 0 {
		detail = fmt.Sprintf("plan %s has no version %d; it has none yet (publish one with POST /v1/plans/%s/versions)", p.Name, n, p.Name)
	}
	return refuse(KindNotFound, wire.CodePlanVersionNotFound, detail)
}

// DeletePlan deletes a plan no tenant follows and no rollout is running.
func (s *Service) DeletePlan(ctx context.Context, name string) error {
	p, err := s.GetPlan(ctx, name)
	if err != nil {
		return err
	}
	err = s.fleet.DeletePlan(ctx, p.Name)
	switch {
	case errors.Is(err, fleet.ErrNotFound):
		return planNotFound(p.Name)
	case errors.Is(err, fleet.ErrInUse):
		return s.planInUse(ctx, p.Name)
	}
	return err
}

// planInUse says what keeps a plan from being deleted, and what to do.
func (s *Service) planInUse(ctx context.Context, name string) error {
	var why []string
	if page, err := s.tenants.List(ctx, tenant.ListOptions{Plan: name, PageSize: 6}); err == nil && len(page.Tenants) > 0 {
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
		// What the store saw and the lists above do not show: moves onto
		// or off the plan, or a fleet move onto it, in progress.
		why = append(why, "tenants are being moved onto or off it (GET /v1/rollouts lists a fleet move onto it): let the moves finish, or cancel them")
	}
	return refuse(KindConflict, wire.CodePlanInUse, fmt.Sprintf("plan %s is in use: %s; then delete it", name, strings.Join(why, "; and ")))
}

// NewVersion is a version to publish.
type NewVersion struct {
	Plan    string
	Config  json.RawMessage // a JSON object
	Message string
}

// ErrStoreRefused marks a version the store refused after the checks
// passed: its words are for the log, not the user.
var ErrStoreRefused = errors.New("the store refused what the checks let through")

// PublishVersion checks a plan version's config against the plan
// provider's schema (a plan layer) and publishes it as actor's. keep, if
// set, keeps the response to an idempotent request with the version, so
// that a retry publishes no second version.
func (s *Service) PublishVersion(ctx context.Context, in NewVersion, actor string, keep *Keep[*fleet.Version]) (*fleet.Version, error) {
	p, err := s.GetPlan(ctx, in.Plan)
	if err != nil {
		return nil, err
	}
	if err := s.checkVersion(p, in); err != nil {
		return nil, err
	}
	var v *fleet.Version
	if keep != nil {
		v, err = s.fleetIdem.PublishVersionIdempotent(ctx, p.Name, in.Config, in.Message, actor, keep.Reservation, keep.Respond)
	} else {
		v, err = s.fleet.PublishVersion(ctx, p.Name, in.Config, in.Message, actor)
	}
	switch {
	case errors.Is(err, fleet.ErrNotFound):
		return nil, planNotFound(p.Name) // deleted meanwhile
	case errors.Is(err, fleet.ErrInvalid) && len(violation.Of(err)) == 0:
		return nil, &Error{Kind: KindInvalid, Code: wire.CodeInvalidComputeConfig,
			Detail: fmt.Sprintf("the store refused this version of plan %s; landlord's log has the cause under this request's id", p.Name),
			Fields: []Field{{Pointer: "/config", Message: "was refused by the store"}},
			Err:    fmt.Errorf("%w: %w", ErrStoreRefused, err)}
	}
	return v, err
}

// checkVersion reports every problem of a version of p at once.
func (s *Service) checkVersion(p *fleet.Plan, in NewVersion) error {
	if err := RequireObject(in.Config, "/config"); err != nil {
		return err
	}
	var errs violation.List
	if at := jsonscan.NULAt(in.Config, "/config"); at != "" {
		errs.Add(at, "%s", MustNotHoldNUL)
	}
	if len(in.Message) > fleet.MaxDescription {
		errs.Add("/message", "must be at most %d bytes", fleet.MaxDescription)
	}
	if strings.ContainsRune(in.Message, 0) {
		errs.Add("/message", "%s", MustNotHoldNUL)
	}
	// The config without its per-placement fragments, then each fragment,
	// is a plan layer for the plan's provider (fleet.Layer merges them).
	base, fragments, err := fleet.Fragments(in.Config)
	if err != nil && !errors.Is(err, fleet.ErrInvalid) {
		return err
	}
	for _, v := range violation.Of(err) {
		errs.Add("/config"+v.Pointer, "%s", v.Message)
	}
	layers := map[string]json.RawMessage{"": base}
	for name, f := range fragments {
		layers["/"+fleet.PlacementsKey+"/"+violation.Escape(name)] = f
	}
	for at, layer := range layers {
		if layer == nil {
			continue
		}
		if err := s.compute.CheckPlanConfig(p.Provider, layer); err != nil {
			if !errors.Is(err, provider.ErrInvalidSpec) {
				return reword(err, fmt.Sprintf("plan %s is for provider %s, which is not enabled on this server", p.Name, p.Provider))
			}
			for _, v := range violation.Of(err) {
				errs.Add("/config"+at+v.Pointer, "%s", v.Message)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	fields := make([]Field, len(errs))
	for i, v := range errs {
		fields[i] = Field{Pointer: v.Pointer, Message: v.Message}
	}
	slices.SortStableFunc(fields, func(a, b Field) int { return strings.Compare(a.Pointer, b.Pointer) })
	return refuse(KindInvalid, wire.CodeInvalidComputeConfig, fmt.Sprintf("the config is not valid for provider %s, the plan's", p.Provider), fields...)
}

// RequireObject checks that the member at (a JSON pointer) is present and
// a JSON object.
func RequireObject(raw json.RawMessage, at string) error {
	c := strings.TrimSpace(string(raw))
	switch {
	case c == "" || c == "null":
		return refuse(KindMalformed, wire.CodeInvalidBody, at[1:]+" is required", Field{Pointer: at, Message: "is required"})
	case c[0] != '{':
		return refuse(KindMalformed, wire.CodeInvalidBody, at[1:]+" must be a JSON object", Field{Pointer: at, Message: "must be an object"})
	}
	return nil
}
