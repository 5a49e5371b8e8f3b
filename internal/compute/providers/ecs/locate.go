package ecs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// placement is where a tenant's service is: which API, which cluster, which
// name.
type placement struct {
	region, endpoint string
	role             *assumeRole
	cluster          string // ARN
	service          string // name
}

// family is the task definition family of the tenant's own revisions.
func (pl placement) family() string { return pl.service }

// serviceARN is the ARN the service has in its cluster.
func (pl placement) serviceARN() string {
	c, _ := parseARN(pl.cluster)
	name, _ := c.typed("cluster")
	c.Service, c.Resource = "ecs", "service/"+name+"/"+pl.service
	return c.String()
}

// placementOf is where o puts the tenant called tenantName.
func (p *Provider) placementOf(o tenantOptions, tenantName string) (placement, error) {
	pl := placement{region: o.region(), endpoint: o.Endpoint, role: o.AssumeRole, cluster: o.ClusterARN,
		service: serviceName(o.prefix(), tenantName)}
	return pl, pl.check()
}

// check refuses a placement without a cluster.
func (pl placement) check() error {
	if pl.cluster == "" {
		return fmt.Errorf("ecs: no cluster_arn in the tenant's config or the ecs block: %w", provider.ErrInvalidSpec)
	}
	return nil
}

// placementOfRef is where the tenant's service runs: where its recorded
// service ARN says, else where its stored config (over the block's
// defaults) puts it. A stored config always decodes; should it not, the
// defaults stand in, rather than fail a destroy.
func (p *Provider) placementOfRef(t provider.TenantRef) (placement, error) {
	o := p.base
	if merged, err := workload.Merge(p.defaults, t.Config); err == nil {
		var stored tenantOptions
		if json.Unmarshal(merged, &stored) == nil {
			o = stored
		}
	}
	pl, _ := p.placementOf(o, t.Name)
	if a, err := parseARN(t.ResourceIDs[resourceService]); err == nil {
		if cluster, name, ok := splitServiceARN(a); ok {
			a.Resource = "cluster/" + cluster
			pl.region, pl.cluster, pl.service = a.Region, a.String(), name
		}
	}
	return pl, pl.check()
}

// splitServiceARN reads cluster and service names from a service ARN in the
// long format (service/cluster/name).
func splitServiceARN(a arn) (cluster, name string, ok bool) {
	rest, ok := a.typed("service")
	if !ok {
		return "", "", false
	}
	cluster, name, ok = strings.Cut(rest, "/")
	return cluster, name, ok && name != ""
}

// Resource id keys of ProvisionResult and UpdateResult.
const (
	resourceService        = "service"
	resourceCluster        = "cluster"
	resourceTaskDefinition = "task_definition"
)

// found is a tenant's service as ECS describes it.
type found struct {
	pl      placement
	client  *ecs.Client
	service *types.Service // nil when no live service of the name exists
	// inactive is the creation time of an INACTIVE service of the name, which
	// a new one replaces.
	inactive string
	// foreign is set when a live service of the name belongs to someone else.
	foreign string
	// draining is set when a service of the name is being deleted: whoever
	// it belonged to, the name is free once it is INACTIVE.
	draining bool
}

// live reports whether the tenant has a service that is not being deleted.
func (f *found) live() bool { return f.service != nil && aws.ToString(f.service.Status) == "ACTIVE" }

// describe finds the service of pl and checks that it is the tenant's. The
// call is shared with concurrent describes in the same cluster (see
// reads.go). A service ECS no longer knows, whether it answers MISSING or
// ServiceNotFoundException, is none.
func (p *Provider) describe(ctx context.Context, pl placement, tenantID string) (*found, error) {
	c, err := p.aws.ecs(ctx, pl)
	if err != nil {
		return nil, err
	}
	got, err := p.reads(c, pl.cluster).services.get(ctx, []string{pl.service})
	if err != nil {
		return nil, awsError("describe service "+pl.service, err)
	}
	r := got[pl.service]
	if r.err != nil {
		return nil, r.err
	}
	f := &found{pl: pl, client: c}
	for _, svc := range r.services {
		s := &svc // a copy: the call's answer is shared with other callers
		switch {
		case aws.ToString(s.Status) == "INACTIVE":
			if s.CreatedAt != nil {
				f.inactive = s.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000000Z")
			}
		case aws.ToString(s.Status) == "DRAINING":
			f.draining = true
			if tagMap(s.Tags)[tagTenantID] == tenantID {
				f.service = s
			}
		case tagMap(s.Tags)[tagTenantID] != tenantID:
			f.foreign = tagMap(s.Tags)[tagTenantID]
			if f.foreign == "" {
				f.foreign = "not landlord's"
			}
		default:
			f.service = s
		}
	}
	return f, nil
}

// locate finds a tenant known only by id: where it was last seen, else by
// a scan of the default cluster for its tag.
func (p *Provider) locate(ctx context.Context, tenantID string) (*found, error) {
	if v, ok := p.hints.Load(tenantID); ok {
		f, err := p.describe(ctx, v.(placement), tenantID)
		if err != nil || f.service != nil {
			return f, err
		}
	}
	if p.base.ClusterARN == "" {
		return &found{}, nil
	}
	pl, err := p.placementOf(p.base, "")
	if err != nil {
		return nil, err
	}
	c, err := p.aws.ecs(ctx, pl)
	if err != nil {
		return nil, err
	}
	pages := ecs.NewListServicesPaginator(c, &ecs.ListServicesInput{Cluster: aws.String(pl.cluster), MaxResults: aws.Int32(100)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, awsError("list services", err)
		}
		for batch := range slices.Chunk(page.ServiceArns, 10) {
			out, err := c.DescribeServices(ctx, &ecs.DescribeServicesInput{
				Cluster: aws.String(pl.cluster), Services: batch, Include: []types.ServiceField{types.ServiceFieldTags},
			})
			if err != nil {
				return nil, awsError("describe services", err)
			}
			for i := range out.Services {
				s := &out.Services[i]
				if tagMap(s.Tags)[tagTenantID] == tenantID && aws.ToString(s.Status) != "INACTIVE" {
					pl.service = aws.ToString(s.ServiceName)
					p.hints.Store(tenantID, pl)
					return &found{pl: pl, client: c, service: s}, nil
				}
			}
		}
	}
	return &found{pl: pl, client: c}, nil
}
