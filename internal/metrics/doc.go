// Package metrics holds landlord's Prometheus metrics: HTTP requests,
// provider operations, reconciles, the work queue and tenants by status. The
// packages that produce them declare small observer interfaces; this package
// implements them, and cmd/landlord wires it in.
package metrics
