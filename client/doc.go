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
//
// Events reads the feed of CloudEvents landlord publishes, a page at a time
// or as a stream that reconnects where it left off; Subscriptions manages
// the webhooks that receive the same events:
//
//	for e, err := range c.Events().Stream(ctx, client.StreamOptions{Types: []string{client.EventTenantReady}}) {
//		if err != nil {
//			return err
//		}
//		if d, ok := client.TenantOf(e); ok {
//			fmt.Println(d.Tenant.Name, "is ready")
//		}
//	}
package client
