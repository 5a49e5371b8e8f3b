package ui

import (
	"context"
	"slices"

	"github.com/jaxxstorm/landlord/client"
)

// The plans' pages only read: plans are made and published with the CLI
// or the API, where a version's config is reviewed as a file.

// planRow is a plan with how many tenants follow it.
type planRow struct {
	client.Plan
	Tenants tenantCount
}

// tenantCount is how many tenants follow a plan, in all and by version.
type tenantCount struct {
	Total     int
	ByVersion map[int64]int
	// More says there are more than Total: counting stopped at
	// maxCounted.
	More bool
}

// maxCounted bounds the tenants a plan's count reads, page by page: the
// API has no count of a plan's tenants.
const maxCounted = 5000

// countTenants counts the tenants that follow a plan, deleted ones aside.
func countTenants(ctx context.Context, api *client.Client, plan string) (tenantCount, error) {
	n := tenantCount{ByVersion: map[int64]int{}}
	opts := client.ListOptions{Plan: plan, PageSize: client.MaxPageSize}
	for {
		page, err := api.Tenants().List(ctx, opts)
		if err != nil {
			return n, err
		}
		for _, t := range page.Tenants {
			n.Total++
			if t.Plan != nil {
				n.ByVersion[t.Plan.Version]++
			}
		}
		if page.NextPageToken == "" {
			return n, nil
		}
		if n.Total >= maxCounted {
			n.More = true
			return n, nil
		}
		opts.PageToken = page.NextPageToken
	}
}

func (c *Console) listPlans(x *call) error {
	list, err := x.api.Plans().List(x.r.Context())
	if err != nil {
		return err
	}
	rows := make([]planRow, len(list.Plans))
	for i, p := range list.Plans {
		rows[i].Plan = p
		if rows[i].Tenants, err = countTenants(x.r.Context(), x.api, p.Name); err != nil {
			return err
		}
	}
	return c.show(x, "plans", "Plans", "plans", rows)
}

// planView is a plan's page.
type planView struct {
	planRow
	// Versions are newest first.
	Versions []versionView
	Rollouts []rolloutRow
}

type versionView struct {
	client.PlanVersion
	// Config is the version's config, indented. A plan's config holds no
	// secrets: the API refuses a version that sets a writeOnly field.
	Config  string
	Tenants int
	Current bool
}

func (c *Console) planPage(x *call) error {
	ctx := x.r.Context()
	p, err := x.api.Plans().Get(ctx, x.r.PathValue("plan"))
	if err != nil {
		return err
	}
	v := planView{planRow: planRow{Plan: *p}}
	if v.Tenants, err = countTenants(ctx, x.api, p.Name); err != nil {
		return err
	}
	versions, err := x.api.Plans().Versions(ctx, p.Name)
	if err != nil {
		return err
	}
	for _, pv := range slices.Backward(versions.Versions) {
		v.Versions = append(v.Versions, versionView{PlanVersion: pv, Config: pretty(pv.Config),
			Tenants: v.Tenants.ByVersion[pv.Version], Current: pv.Version == p.CurrentVersion})
	}
	rollouts, err := x.api.Rollouts().List(ctx, client.RolloutListOptions{Plan: p.Name})
	if err != nil {
		return err
	}
	for _, ro := range rollouts.Rollouts {
		v.Rollouts = append(v.Rollouts, newRolloutRow(ro))
	}
	return c.show(x, "plan", p.Name, "plans", v)
}
