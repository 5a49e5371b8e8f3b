// Package wire is the vocabulary landlord's server shares with its clients:
// the types of HTTP API v1 as they travel (request and response bodies,
// problems, the string values of their enumerations) and the facts a
// client must know to speak it: the problem codes it branches on, the
// annotations it sets (PausedAnnotation, RetryAnnotation), the
// compute_config keys that choose a provider, the limits of a page or a
// rollout, how a tenant id and a maintenance window are written. The
// server (internal/api and the domain packages) reads and writes them and
// generates its OpenAPI document from them; the Go client (package
// client), the CLI and the console use them. It imports only the standard
// library, so that none of those carries the server with it.
//
// Where a domain package has a type of the same meaning (tenant.Status,
// compute.ComputeStatus), the domain's type is the contract inside the
// server and this one is its JSON form; internal/api converts between them
// and its tests fail when the two drift apart.
package wire
