package docker

import (
	"context"
	"fmt"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// existing is what the Engine holds for a tenant, found by label.
type existing struct {
	// current maps a spec container name to its container.
	current map[string]container.Summary
	// stale are containers left aside by an interrupted replacement, or
	// duplicates.
	stale []container.Summary
	// tenantName is the tenant name recorded on the containers.
	tenantName string
}

func (e *existing) empty() bool { return len(e.current) == 0 && len(e.stale) == 0 }

// find lists the tenant's containers, running or not.
func (p *Provider) find(ctx context.Context, n naming) (*existing, error) {
	res, err := p.client.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: client.Filters{}.Add("label", n.tenantFilter()),
	})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	e := &existing{current: map[string]container.Summary{}}
	for _, c := range res.Items {
		name := c.Labels[n.label(labelContainer)]
		if e.tenantName == "" {
			e.tenantName = c.Labels[n.label(labelTenantName)]
		}
		if name == "" || !hasName(c, n.withName(c.Labels[n.label(labelTenantName)]).container(name)) {
			e.stale = append(e.stale, c)
			continue
		}
		if _, dup := e.current[name]; dup {
			e.stale = append(e.stale, c)
			continue
		}
		e.current[name] = c
	}
	return e, nil
}

func (n naming) withName(tenantName string) naming {
	n.tenantName = tenantName
	return n
}

// hasName reports whether c is named name.
func hasName(c container.Summary, name string) bool {
	for _, got := range c.Names {
		if strings.TrimPrefix(got, "/") == name {
			return true
		}
	}
	return false
}
