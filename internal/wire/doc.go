// Package wire holds the types of landlord's HTTP API v1 as they travel:
// the request and response bodies, problems, and the string values of their
// enumerations. The server (internal/api) reads and writes them and
// generates its OpenAPI document from them; the Go client (package client)
// decodes into them. It imports only the standard library, so that the
// client does not carry the server with it.
//
// Where a domain package has a type of the same meaning (tenant.Status,
// compute.ComputeStatus), the domain's type is the contract inside the
// server and this one is its JSON form; internal/api converts between them
// and its tests fail when the two drift apart.
package wire
