// Package service is landlord's application layer: the use cases of
// tenants, plans and rollouts (create, change, delete, forget, plan
// layering, publishing, the fleet planner, rollout actions) with their
// rules in one place. It takes domain types, asks compute.Manager to
// resolve configs and writes through the stores; it knows nothing of HTTP.
//
// The API (internal/api) decodes a request, authorises it, calls a use
// case here and maps the result, or the error, to the wire. The console
// reaches these use cases through the API with the Go client, so that what
// it does is authorised, made idempotent and audited exactly as a CLI
// call. The rollout driver moves tenants with the same plan layering
// through the stores' MoveTenant.
//
// Refusals are *Error values: a Kind (what sort of refusal), the stable
// code of the wire vocabulary, the words a user reads and the fields at
// fault. Errors of the domain packages (tenant.ErrNotFound, ...) pass
// through wrapped; the API's problem table maps both.
package service
