// Package fleet holds plans and rollouts: the domain of changing many
// tenants at once.
//
// A plan is a named, versioned fragment of compute config for one provider
// (standard v1, v2, …); a published version never changes. A tenant that
// follows a plan (tenant.PlanRef) runs the provider's defaults, then its
// plan version's config, then its own compute_config, each merged over the
// one before.
//
// A rollout moves a plan's tenants from their version to another in waves.
// Its members and their waves are chosen when it starts (Assign) and
// stored; the elected controller then drives it one step at a time (Step),
// changing a tenant only through Store.MoveTenant, which records the
// change and the member's new state in one transaction: a controller that
// dies mid-rollout leaves a record from which its successor goes on
// without changing any tenant twice. A tenant counts as done only when it
// is ready at the generation that carries the new version.
//
// Like internal/tenant, this package holds types, rules and the store
// contract, and imports no adapter.
package fleet
