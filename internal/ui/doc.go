// Package ui is landlord's web console, served by landlord serve at /ui/:
// the tenants with their statuses kept live, a tenant's state, workload and
// history with its actions, create and edit forms made from the provider's
// JSON Schema, the rollouts of plans with their waves kept live and their
// actions, the plans and their versions, the webhook subscriptions with
// their delivery logs and actions, and the providers.
//
// The console is a client of the API in the same process: every page reads
// and every form writes through the API's handler, with the signed-in
// user's bearer token, so that the API's validation, roles, problems and
// audit are the console's, and it has no path of its own to the store. The
// pages are rendered on the server with html/template from embedded files,
// under a Content-Security-Policy that allows no inline script or style;
// a little JavaScript keeps them live from server-sent events, fed by the
// store's change feed (tenant.ChangeFeed), or, for a rollout, which the
// feed does not announce, by reading it again every second while it is
// active. See docs/ui.md.
package ui
