package ecs

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Destroy removes the tenant's service and the task definition revisions
// registered for it, finding them by the tenant id alone: where the tenant
// was last seen, else in the default cluster. The Manager calls DestroyOf,
// which knows where the tenant runs.
func (p *Provider) Destroy(ctx context.Context, tenantID string) error {
	ctx, cancel := detached(ctx)
	defer cancel()
	defer p.lock(tenantID)()
	f, err := p.locate(ctx, tenantID)
	if err != nil {
		return fmt.Errorf("ecs: destroy tenant %s: %w", tenantID, err)
	}
	return p.destroy(ctx, f, tenantID)
}

// DestroyOf removes the tenant's service where it runs and the task
// definition revisions registered for it. It finishes even when ctx is
// cancelled, and is done when the service is deleted (ECS drains it) or
// was never there.
func (p *Provider) DestroyOf(ctx context.Context, t provider.TenantRef) error {
	ctx, cancel := detached(ctx)
	defer cancel()
	defer p.lock(t.ID)()
	pl, err := p.placementOfRef(t)
	if err != nil {
		return fmt.Errorf("ecs: destroy tenant %s: %w", t.ID, err)
	}
	f, err := p.describe(ctx, pl, t.ID)
	if err != nil {
		return fmt.Errorf("ecs: destroy tenant %s: %w", t.ID, err)
	}
	return p.destroy(ctx, f, t.ID)
}

// destroy scales the service to 0, deletes it (force: ECS stops what still
// runs) and deregisters the tenant's revisions.
func (p *Provider) destroy(ctx context.Context, f *found, tenantID string) error {
	if f.client == nil {
		return nil // no cluster to look in: nothing can exist
	}
	if f.live() {
		svc := f.service.ServiceArn
		if f.service.DesiredCount > 0 {
			if _, err := f.client.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String(f.pl.cluster), Service: svc, DesiredCount: aws.Int32(0)}); err != nil && !gone(err) {
				return fmt.Errorf("ecs: destroy tenant %s: %w", tenantID, awsError("scale service "+f.pl.service+" to 0", err))
			}
		}
		if _, err := f.client.DeleteService(ctx, &ecs.DeleteServiceInput{Cluster: aws.String(f.pl.cluster), Service: svc, Force: aws.Bool(true)}); err != nil && !gone(err) {
			return fmt.Errorf("ecs: destroy tenant %s: %w", tenantID, awsError("delete service "+f.pl.service, err))
		}
		p.log(tenantID).Info("service deleted", "service", aws.ToString(svc))
	}
	if err := p.deregister(ctx, f, tenantID); err != nil {
		return fmt.Errorf("ecs: destroy tenant %s: %w", tenantID, err)
	}
	// A deleted service's last listing is no use to a status read again.
	p.reads(f.client, f.pl.cluster).remember(f.pl.service, nil)
	p.hints.Delete(tenantID)
	return nil
}

// gone reports whether err says the service is already deleted or being
// deleted.
func gone(err error) bool {
	return isCode(err, "ServiceNotFoundException") || isCode(err, "ServiceNotActiveException")
}
