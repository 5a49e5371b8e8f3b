// Package docker is the compute provider that runs tenant workloads as
// containers on one Docker Engine, through the Engine API (github.com/moby/moby/client)
// with API version negotiation.
//
// Every container of a tenant's spec becomes one Docker container named
// <label_prefix>-<tenant name>-<first 8 of tenant id>-<container>, labelled
// <label_prefix>.tenant_id, .tenant_name, .managed-by=landlord, .generation,
// .config-hash (an HMAC-SHA256, keyed with the install's Options.HashKey, of
// that container's configuration including its secrets) and .container. The containers of a tenant join
// a per-tenant user-defined bridge network <label_prefix>-<tenant name>-<short id>
// under their container name as alias, so that they reach each other by name
// and tenants are isolated by default; or, in the shared-network mode, the
// operator's network_name, which every tenant joins, without that alias
// (it would name every tenant's container of that name). Each network the
// provider creates takes one of the Engine's default address pools, which
// every program on the Engine shares, unless address_pool gives landlord a
// range of its own (see AddressPool).
// The Engine accepts several networks of one name, so when two landlord
// processes create one at once, each keeps the oldest (ties: lowest id),
// removes the duplicate it made, and attaches containers by network id; a
// container found on a losing duplicate is moved on the next converge.
//
// Nothing is kept in memory: every operation finds the tenant's containers by
// label, so a restarted landlord adopts what exists. Provision and Update
// compare the per-container config hash and recreate only the containers
// that changed; a replaced container is renamed aside, its successor started
// (after stopping it first when both would publish the same fixed host port)
// and the old one removed only once every container has converged, so that a
// failure restores the previous workload.
//
// Health checks: a command probe becomes a Docker HEALTHCHECK (CMD form, run
// inside the container). HTTP and TCP probes are not run inside the
// container, because images without a shell or curl cannot run them; instead
// GetStatus probes the published host port from landlord's host, and reports
// the health as unknown when the probed port is not published.
//
// Drift: Inspect (provider.DriftDetector) reads the tenant's containers and
// network live and compares every field the provider writes with the spec:
// image, entrypoint and command, environment, secrets (by value, reported
// redacted), port bindings (a host port the Engine chose is not compared),
// CPU and memory, health check, restart policy, privileged mode, bind
// mounts, the labels it finds containers by, each container's attachment to
// the tenant's network (and to no other) and its state, and the network
// itself. What the Engine copies from the image into a container that does
// not set it (moby daemon/commit.go merge) is expected as the Engine copies
// it, read from the image's configuration. Provision and Update compare the
// same way, not only the config-hash label: a container changed in place
// (docker update), re-created by hand with copied labels, or disconnected
// is replaced; a stopped or paused one is started or unpaused.
//
// Changes: WatchChanges (provider.ChangeNotifier) follows the Engine's
// events API, one stream of landlord's container events (by label) and one
// of network events (which carry no labels: a connect or disconnect is
// mapped to its tenant through the container's labels, a removed network
// through the networks listed when the stream opened). A stream that ends
// is opened again with backoff from the last event's time.
//
// Secret values are given to containers as environment variables only; they
// are never logged, never put in labels (only inside the keyed fingerprint,
// which cannot be used to test guesses without the key) and never returned.
package docker
