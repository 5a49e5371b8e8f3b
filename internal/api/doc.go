// Package api is landlord's HTTP API, version 1: tenants, compute config
// discovery, health and metrics. It is the single source of truth that the
// CLI, the Go client and any web page use: it validates every request in
// full (the provider's JSON Schema and rules, on the config merged with the
// operator's defaults) before anything is stored.
//
// Every error is an RFC 9457 problem (application/problem+json) with a
// stable code and, for invalid input, every problem with its JSON pointer
// into the request body. Routes are declared once, in a table that serves
// them and describes them in the OpenAPI document.
package api
