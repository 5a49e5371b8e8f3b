// Package workload is the toolkit providers build themselves from: the
// portable container workload that Docker, ECS, Kubernetes and Nomad tenants
// share, as tenants write it (Config, with its JSON Schema fragment and the
// rules the schema cannot say) and as providers receive it (Workload, with
// containers, secrets, resources and networking decoded); the JSON Merge
// Patch that puts operator defaults under tenant values; the split of a
// provider's configuration block into its settings and tenant defaults;
// keyed fingerprints; and durations written as text.
//
// It is part of landlord's provider SDK (see package sdk for the
// compatibility promise): the compute contract (package provider) and every
// provider, in tree or out, build on it.
package workload
