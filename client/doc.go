// Package client is the Go client of landlord's HTTP API v1. It mirrors the
// API's resources:
//
//	c, err := client.New(client.DefaultConfig())
//	t, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: "acme", ComputeConfig: cfg}, client.CreateOptions{})
//	t, err = c.Tenants().Wait(ctx, t.ID, client.UntilReady, nil)
//
// The request and response types are the API's wire types, and its problem
// codes, annotation names, selection keys and limits are the server's own
// values (vocabulary.go), so there is one definition of each. The package imports only the standard library and
// those types (TestStandsAlone holds it to that), so a program using it does
// not build the server. Failed requests return a *Error carrying the API's
// problem (its stable code and every field at fault); network failures are
// wrapped with %w. The client never logs, and never prints its token.
package client
