package api

import (
	"fmt"
	"github.com/jaxxstorm/landlord/internal/events"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jaxxstorm/landlord/internal/api/openapi"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// operationNote is what the route table cannot say about an operation.
type operationNote struct {
	description string
	// params are the query parameters and headers the handler reads.
	params []openapi.Parameter
	// success says more of the success response.
	success string
	// headers are sent with the success response, beyond X-Request-ID,
	// ETag (with a Tenant or a Rollout) and Location (with a 201), by name,
	// with what each says.
	headers map[string]string
	// also are other responses that are not problems.
	also []openapi.Response
	// problems are the problem codes the handler may answer, by status,
	// beyond those of its access, parameters and body.
	problems map[int][]string
}

var badParameter = map[int][]string{http.StatusBadRequest: {wire.CodeInvalidParameter}}

func queryParam(name, doc string, schema *openapi3.Schema, problems map[int][]string) openapi.Parameter {
	return openapi.Parameter{Name: name, In: openapi3.ParameterInQuery, Description: doc, Schema: schema, Problems: problems}
}

func headerParam(name, doc string, problems map[int][]string) openapi.Parameter {
	return openapi.Parameter{Name: name, In: openapi3.ParameterInHeader, Description: doc, Schema: openapi3.NewStringSchema(), Problems: problems}
}

// repeated is a query parameter that may be given several times.
func repeated(p openapi.Parameter) openapi.Parameter {
	p.Repeated = true
	return p
}

func pageSizeSchema() *openapi3.Schema {
	s := openapi3.NewIntegerSchema().WithMin(1).WithMax(tenant.MaxPageSize)
	s.Default = tenant.DefaultPageSize
	return s
}

func eventOrderSchema() *openapi3.Schema {
	s := openapi3.NewStringSchema().WithEnum(orderOldest, orderNewest)
	s.Default = orderOldest
	return s
}

func statusesSchema() *openapi3.Schema {
	item := openapi3.NewStringSchema()
	for _, s := range tenant.Statuses {
		item.Enum = append(item.Enum, string(s))
	}
	return openapi3.NewArraySchema().WithItems(item)
}

var (
	pageSizeParam   = queryParam("page_size", "How many to return at most.", pageSizeSchema(), badParameter)
	pageTokenParam  = queryParam("page_token", "The next_page_token of the previous page.", openapi3.NewStringSchema(), badParameter)
	eventOrderParam = queryParam("order", "oldest lists the history oldest first, newest newest first. "+
		"A page token continues the order it was returned by; given to the other order it is a 400.", eventOrderSchema(), badParameter)

	placementParam = queryParam("placement", "The placement whose events to list, of a tenant with placements; all of them when left out. "+
		"A name the tenant has no placement of is a 404.", openapi3.NewStringSchema(), badParameter)
	statusPlacementParam = queryParam("placement", "The placement whose workload to ask about: required for a tenant with placements (a 400 without it), "+
		"and a 404 when the tenant has no placement of that name.", openapi3.NewStringSchema(), badParameter)

	dryRunParam = queryParam("dry_run", "Validate, and answer 200 with the tenant as it would be stored (provider chosen, defaults merged into effective_config, its layers in config_layers); store nothing.",
		openapi3.NewBoolSchema(), badParameter)
	changeDryRunParam = queryParam("dry_run", "Check the change as it would be made (If-Match too: a stale one is a 412), and answer 200 with the tenant as the change would make it "+
		"(generation and version as they would be, defaults merged into effective_config, its layers in config_layers) and the ETag of the tenant as stored, "+
		"which the dry run leaves as it is; store nothing, record no event.",
		openapi3.NewBoolSchema(), badParameter)
	includeDeletedParam = queryParam("include_deleted", "Find a deleted tenant too; without it, a deleted tenant is a 404.",
		openapi3.NewBoolSchema(), badParameter)
	listDeletedParam = queryParam("include_deleted", "List deleted tenants too.", openapi3.NewBoolSchema(), badParameter)
	forgetParam      = queryParam("forget", "Delete the record at once, destroying nothing, of a tenant whose provider is not enabled on this server "+
		"(it was switched to another): answered 200 with the tenant, deleted. The tenant's history records who forgot it and what may still run. "+
		"A tenant whose provider is enabled is a 409 provider_enabled: delete it without forget.", openapi3.NewBoolSchema(),
		map[int][]string{http.StatusBadRequest: {wire.CodeInvalidParameter}, http.StatusConflict: {wire.CodeProviderEnabled}})
	statusParam = repeated(queryParam("status", "Only tenants in one of these statuses. Repeat the parameter, or separate statuses with commas.",
		statusesSchema(), badParameter))
	labelParam = repeated(queryParam("label", "Only tenants with this label, as key=value. Repeat the parameter to require several.",
		openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()), badParameter))
	providerFilterParam = queryParam("provider", "Only tenants of this compute provider.", openapi3.NewStringSchema(), nil)
	namePrefixParam     = queryParam("name_prefix", "Only tenants whose name starts with this.", openapi3.NewStringSchema(), nil)

	providerParam = queryParam("provider", "The provider to describe; the default provider when absent.", openapi3.NewStringSchema(),
		map[int][]string{http.StatusUnprocessableEntity: {wire.CodeProviderNotFound}})

	idempotencyKeyParam = headerParam("Idempotency-Key", "Makes a retry safe: a request with the key of an earlier one (by the same token, within 24 hours) "+
		"and the same body gets the earlier response again, with Idempotent-Replayed: true; with another body it is a 422. "+
		"While the earlier one is in progress it is a 409 idempotency_in_progress with Retry-After. "+
		"What the request stores and the response kept for the key are stored in one transaction; a request that fails, or is a dry run, keeps nothing, and frees the key. "+
		"1 to 255 printable ASCII characters.",
		map[int][]string{http.StatusBadRequest: {wire.CodeInvalidParameter}, http.StatusConflict: {wire.CodeIdempotencyPending},
			http.StatusUnprocessableEntity: {wire.CodeIdempotencyMismatch}})

	rolloutIfMatchParam = headerParam("If-Match", "Act only if the rollout's version is still this ETag (from an ETag header), else answer 412. "+
		"Without it (or with *), a concurrent change (by the controller, say) is retried on the new state, or answered 409.",
		map[int][]string{http.StatusBadRequest: {wire.CodeInvalidParameter}, http.StatusPreconditionFailed: {wire.CodePreconditionFailed}})
	planFilterParam    = queryParam("plan", "Only tenants that follow this plan.", openapi3.NewStringSchema(), nil)
	rolloutPlanParam   = queryParam("plan", "Only rollouts of this plan.", openapi3.NewStringSchema(), nil)
	activeParam        = queryParam("active", "Only rollouts that have not finished (running, paused, halted, aborting).", openapi3.NewBoolSchema(), badParameter)
	rolloutDryRunParam = queryParam("dry_run", "Answer 200 with the fleet plan: what the rollout would do, tenant by tenant (waves, effective config changes, "+
		"the provider's action, maintenance windows, pinned and current tenants, counts); start nothing.", openapi3.NewBoolSchema(), badParameter)
	afterParam = queryParam("after", "Only events after this seq (the seq of the last event read); 0 or absent from the first.",
		openapi3.NewIntegerSchema().WithMin(0), badParameter)
	rolloutEventsPageParam = queryParam("page_size", "How many events to return at most; the most when absent.", openapi3.NewIntegerSchema().WithMin(1).WithMax(tenant.MaxPageSize), badParameter)

	feedAfterParam = queryParam("after", "Only events after this sequence (the next of the previous page, or an event's sequence); latest for those written from now on; absent from the oldest kept. "+
		"A page shorter than page_size is the end of the feed for now.",
		openapi3.NewStringSchema(), badParameter)
	feedTypeParam = queryParam("type", "Only events of these types (repeatable, or comma-separated): "+eventTypeList()+".",
		openapi3.NewStringSchema(), badParameter)
	lastEventIDParam = headerParam("Last-Event-ID", "What a reconnecting event source sends: the sequence of the last event it had, as after= does.",
		map[int][]string{http.StatusBadRequest: {wire.CodeInvalidParameter}})
	deliveryStateParam       = queryParam("state", "Only deliveries in this state: pending, delivered or failed.", openapi3.NewStringSchema().WithEnum("pending", "delivered", "failed"), badParameter)
	subscriptionIfMatchParam = headerParam("If-Match", "Change the subscription only if its version is still this ETag, else answer 412.",
		map[int][]string{http.StatusBadRequest: {wire.CodeInvalidParameter}, http.StatusPreconditionFailed: {wire.CodePreconditionFailed}})

	ifMatchParam = headerParam("If-Match", "Change the tenant only if its version is still this ETag (from an ETag header), else answer 412. "+
		"Without it (or with *), a concurrent change is retried on the new state, or answered 409.",
		map[int][]string{http.StatusBadRequest: {wire.CodeInvalidParameter}, http.StatusPreconditionFailed: {wire.CodePreconditionFailed}})
)

// eventTypeList lists the event types, for the document.
func eventTypeList() string {
	names := make([]string, len(events.Types))
	for i, t := range events.Types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// pathParameter describes a path parameter by its name.
func pathParameter(name string) (openapi.Parameter, error) {
	p := openapi.Parameter{Name: name, In: openapi3.ParameterInPath}
	switch name {
	case "tenant":
		p.Description = "The tenant's id or name."
		p.Schema = openapi3.NewStringSchema()
		p.Problems = map[int][]string{http.StatusNotFound: {wire.CodeTenantNotFound}}
	case "plan":
		p.Description = "The plan's name."
		p.Schema = openapi3.NewStringSchema()
		p.Problems = map[int][]string{http.StatusNotFound: {wire.CodePlanNotFound}, http.StatusNotImplemented: {wire.CodeFleetUnavailable}}
	case "version":
		p.Description = "The version's number, from 1."
		p.Schema = openapi3.NewIntegerSchema().WithMin(1)
		p.Problems = map[int][]string{http.StatusNotFound: {wire.CodePlanVersionNotFound}}
	case "rollout":
		p.Description = "The rollout's id."
		p.Schema = openapi3.NewStringSchema()
		p.Problems = map[int][]string{http.StatusNotFound: {wire.CodeRolloutNotFound}, http.StatusNotImplemented: {wire.CodeFleetUnavailable}}
	case "subscription":
		p.Description = "The subscription's id or name."
		p.Schema = openapi3.NewStringSchema()
		p.Problems = map[int][]string{http.StatusNotFound: {wire.CodeNotFound}, http.StatusNotImplemented: {wire.CodeUnavailable}}
	case "event":
		p.Description = "The event's id (evt_…)."
		p.Schema = openapi3.NewStringSchema()
		p.Problems = map[int][]string{http.StatusNotFound: {wire.CodeNotFound}}
	case "asset":
		p.Description = "A file of the page, as the page names it."
		p.Schema = openapi3.NewStringSchema()
		for _, a := range docsAssetNames() {
			p.Schema.Enum = append(p.Schema.Enum, a)
		}
		p.Problems = map[int][]string{http.StatusNotFound: {wire.CodeNotFound}}
	default:
		return openapi.Parameter{}, fmt.Errorf("path parameter {%s}: pathParameter does not describe it", name)
	}
	return p, nil
}

// The response headers the handlers send, with what each says.
const (
	etagDoc        = "The tenant's version, for If-Match."
	rolloutETagDoc = "The rollout's version, for If-Match."
	locationDoc    = "The path of what was created."
	replayedDoc    = "true when this is the earlier response to a request with the same Idempotency-Key."
)

// changeProblems are the problems of a change to a tenant's desired state.
var changeProblems = map[int][]string{
	http.StatusConflict:            {wire.CodeTenantDeleting, wire.CodeVersionConflict, wire.CodeTenantMoving},
	http.StatusUnprocessableEntity: {wire.CodeInvalidComputeConfig, wire.CodeProviderNotFound, wire.CodeInvalidPlan},
	http.StatusServiceUnavailable:  {wire.CodeStorageUnavailable},
	http.StatusNotImplemented:      {wire.CodeFleetUnavailable},
}

// changeSuccess says what a change to a tenant's desired state answers.
const changeSuccess = "the tenant, as stored; with dry_run=true, the tenant as the change would make it, with effective_config and config_layers, " +
	"and the ETag of the tenant as stored (unchanged); nothing is stored"

// moveProblems are the problems of a move and its actions.
var moveProblems = map[int][]string{
	http.StatusBadRequest:          {wire.CodeInvalidBody},
	http.StatusPreconditionFailed:  {wire.CodePreconditionFailed},
	http.StatusNotFound:            {wire.CodeNotFound},
	http.StatusConflict:            {wire.CodeTenantDeleting, wire.CodeVersionConflict, wire.CodeTenantMoving},
	http.StatusUnprocessableEntity: {wire.CodeInvalidComputeConfig, wire.CodeProviderNotFound},
	http.StatusServiceUnavailable:  {wire.CodeStorageUnavailable},
}

// planDoc says how a change treats plan and maintenance_window.
const planDoc = "A tenant that follows a plan is validated with the plan version's config merged between the operator's defaults and its compute_config, " +
	"on every change: an override that does not suit the plan is a 422. "

// rolloutActionProblems are the problems of a rollout's actions.
var rolloutActionProblems = map[int][]string{
	http.StatusConflict:           {wire.CodeRolloutState, wire.CodeVersionConflict},
	http.StatusServiceUnavailable: {wire.CodeStorageUnavailable},
}

// operationNotes are keyed by operation.
var operationNotes = map[string]operationNote{
	"listEvents": {
		description: "Every event landlord publishes (docs/events.md), as CloudEvents 1.0, in the order their changes committed: " +
			"pass the response's next as after to read on. A reader never finds, later, an event before one it read. " +
			"Events are kept for events.retention (7 days by default).",
		params: []openapi.Parameter{feedAfterParam, feedTypeParam, pageSizeParam},
	},
	"streamEvents": {
		description: "The feed as server-sent events (text/event-stream): each event's id is its sequence and its data the CloudEvent; " +
			"a client that reconnects with Last-Event-ID (or after=) resumes after the last event it had. A comment every 15 s keeps a quiet stream open.",
		params: []openapi.Parameter{feedAfterParam, feedTypeParam, lastEventIDParam},
	},
	"createSubscription": {
		description: "Deliveries are POSTs of one CloudEvent (application/cloudevents+json) signed by the Standard Webhooks scheme " +
			"(webhook-id, webhook-timestamp, webhook-signature) with the secret given, which is never shown again. " +
			"The URL must be https (http only to loopback), and reach a public address unless the operator allows its network (events.allow_networks). " +
			"It is sent the events written after it is created.",
		problems: map[int][]string{http.StatusConflict: {wire.CodeNameTaken}, http.StatusUnprocessableEntity: {wire.CodeInvalidBody}},
	},
	"updateSubscription": {
		description: "Fields left out are kept. Enabling a subscription that landlord disabled clears its disabled_reason; " +
			"its pending deliveries, and the events written while it was disabled, are then sent.",
		params:   []openapi.Parameter{subscriptionIfMatchParam},
		problems: map[int][]string{http.StatusConflict: {wire.CodeVersionConflict}, http.StatusUnprocessableEntity: {wire.CodeInvalidBody}},
	},
	"rotateSubscriptionSecret": {
		description: "The new secret signs from now on; the previous ones go on signing beside it (several v1 signatures) until previous_expires_in (24h by default).",
		params:      []openapi.Parameter{subscriptionIfMatchParam},
		problems:    map[int][]string{http.StatusConflict: {wire.CodeVersionConflict}, http.StatusUnprocessableEntity: {wire.CodeInvalidBody}},
	},
	"listDeliveries": {
		description: "Each delivery with its state (pending, delivered, failed), attempts, last status and error; GET one for every attempt, with latency and the start of the answer.",
		params:      []openapi.Parameter{deliveryStateParam, pageSizeParam, pageTokenParam},
	},
	"redeliver": {
		description: "The deliveries become pending, due now, with the same event ids: by event_id, or every event written in [since, until) (at most 7 days) that passes the subscription's filters. " +
			"Events are kept for events.retention.",
		problems: map[int][]string{http.StatusUnprocessableEntity: {wire.CodeInvalidBody}},
	},
	"readyz": {
		also: []openapi.Response{{Status: http.StatusServiceUnavailable, Description: "a check failed; checks names it", Body: wire.Health{}}},
	},
	"getComputeConfig": {params: []openapi.Parameter{providerParam}},
	"getMetrics": {
		description: "The Prometheus text format: HTTP requests by route and code and their latency, tenants by status, reconciles and their duration, the controller's queue depth, provider operations by outcome, and the Go runtime.",
		problems:    map[int][]string{http.StatusNotFound: {wire.CodeNotFound}},
	},
	"createTenant": {
		description: "The tenant is validated in full (name rules, the provider's JSON Schema and rules, on the config merged with the operator's defaults and, for a tenant that follows a plan, the plan version's config) before anything is stored; the controller then provisions it. " +
			"A tenant that follows a plan runs on the plan's provider; plan.version left out is the plan's current version.",
		params:  []openapi.Parameter{dryRunParam, idempotencyKeyParam},
		success: "the tenant, as stored",
		headers: map[string]string{"Idempotent-Replayed": replayedDoc},
		also:    []openapi.Response{{Status: http.StatusOK, Description: "dry_run=true: the tenant as it would be stored, with effective_config; nothing is stored", Body: wire.Tenant{}}},
		problems: map[int][]string{
			http.StatusBadRequest:          {wire.CodeInvalidName},
			http.StatusConflict:            {wire.CodeNameTaken},
			http.StatusUnprocessableEntity: {wire.CodeInvalidComputeConfig, wire.CodeProviderNotFound, wire.CodeInvalidPlan},
			http.StatusServiceUnavailable:  {wire.CodeStorageUnavailable},
			http.StatusNotImplemented:      {wire.CodeFleetUnavailable},
		},
	},
	"listTenants": {
		description: "Deleted tenants are listed only with include_deleted=true, or when status names deleted.",
		params:      []openapi.Parameter{statusParam, providerFilterParam, labelParam, namePrefixParam, planFilterParam, listDeletedParam, pageSizeParam, pageTokenParam},
	},
	"createPlan": {
		description: "A plan has no version until one is published. Its provider is the server's default provider unless the request names one; it never changes.",
		params:      []openapi.Parameter{idempotencyKeyParam},
		success:     "the plan, as stored",
		headers:     map[string]string{"Idempotent-Replayed": replayedDoc},
		problems: map[int][]string{
			http.StatusConflict:            {wire.CodePlanExists},
			http.StatusUnprocessableEntity: {wire.CodeInvalidBody, wire.CodeProviderNotFound},
			http.StatusNotImplemented:      {wire.CodeFleetUnavailable},
			http.StatusServiceUnavailable:  {wire.CodeStorageUnavailable},
		},
	},
	"listPlans": {description: "In name order.", problems: map[int][]string{http.StatusNotImplemented: {wire.CodeFleetUnavailable}}},
	"getPlan":   {},
	"deletePlan": {
		description: "Deletes the plan, its versions and its finished rollouts. A plan that tenants follow, or with a rollout that has not finished, is a 409 plan_in_use saying which, and what to do.",
		success:     "the plan is deleted",
		problems:    map[int][]string{http.StatusConflict: {wire.CodePlanInUse}, http.StatusServiceUnavailable: {wire.CodeStorageUnavailable}},
	},
	"publishPlanVersion": {
		description: "The config is checked against the plan's provider's schema (every field it names must be the provider's, with a valid value; the fields the schema requires may be left to each tenant). " +
			"A plan's config is shown to every reader and shared by its tenants: a secret (a writeOnly field) or a provider choice in it is refused. " +
			"The first version becomes the plan's current version; later ones reach tenants only through rollouts. " +
			"With an Idempotency-Key, a retry gets the version its first request published instead of publishing another.",
		params:  []openapi.Parameter{idempotencyKeyParam},
		success: "the version, as stored",
		headers: map[string]string{"Idempotent-Replayed": replayedDoc},
		problems: map[int][]string{
			http.StatusUnprocessableEntity: {wire.CodeInvalidComputeConfig, wire.CodeProviderNotFound, wire.CodeInvalidBody},
			http.StatusNotImplemented:      {wire.CodeFleetUnavailable},
			http.StatusServiceUnavailable:  {wire.CodeStorageUnavailable},
		},
	},
	"listPlanVersions": {description: "Oldest first."},
	"getPlanVersion":   {},
	"createRollout": {
		description: "Takes every tenant that follows the plan and is not pinned, deleting or already at the target version (or, with from_version, on another version), " +
			"puts them into the waves in order (label selector, then count or percent; those no wave takes form a last wave, rest), " +
			"and checks that each resolves at the target version with its own overrides: one that does not makes it a 422 plan_version_breaks_tenants naming each tenant and its problems, and nothing starts. " +
			"The elected controller then changes the tenants wave by wave, only inside their maintenance windows, at most max_in_flight at once; a tenant is done when it is ready at the generation that carries the new version. " +
			"Each wave bakes for bake before the next; more than max_failures failed tenants (failed, or not ready within deadline) halt the rollout. A plan has at most one rollout that has not finished: " +
			"with an Idempotency-Key, a retry gets the rollout its first request started (as it was then), not a 409 rollout_active.",
		params:  []openapi.Parameter{rolloutDryRunParam, idempotencyKeyParam},
		success: "the rollout, started",
		headers: map[string]string{"Idempotent-Replayed": replayedDoc},
		also:    []openapi.Response{{Status: http.StatusOK, Description: "dry_run=true: the fleet plan; nothing is started", Body: wire.FleetPlan{}}},
		problems: map[int][]string{
			http.StatusConflict:            {wire.CodeRolloutActive},
			http.StatusUnprocessableEntity: {wire.CodeInvalidBody, wire.CodePlanBreaksTenants},
			http.StatusNotImplemented:      {wire.CodeFleetUnavailable},
			http.StatusServiceUnavailable:  {wire.CodeStorageUnavailable},
		},
	},
	"listRollouts": {
		description: "Newest first, at most 100. Lists do not show the members waiting for their windows (waiting); GET a rollout for them.",
		params:      []openapi.Parameter{rolloutPlanParam, activeParam},
		problems:    map[int][]string{http.StatusNotImplemented: {wire.CodeFleetUnavailable}},
	},
	"getRollout":         {description: "With its waves, its members' counts by state, the failed ones and those waiting for their maintenance windows."},
	"listRolloutMembers": {description: "In wave order, then tenant id order."},
	"listRolloutEvents": {
		description: "Oldest first: the rollout's start, its waves, each tenant's change, completion, failure or skip, and every pause, resume, halt and abort, with who did it.",
		params:      []openapi.Parameter{afterParam, rolloutEventsPageParam},
	},
	"pauseRollout": {
		description: "A running rollout changes no more tenants until it is resumed; tenants already changing go on, and are followed.",
		problems:    rolloutActionProblems,
	},
	"resumeRollout": {
		description: "A paused or halted rollout goes on. A halted rollout whose failed tenants are still more than its budget halts again: fix or delete them first, or abort.",
		problems:    rolloutActionProblems,
	},
	"abortRollout": {
		description: "Ends a running, paused or halted rollout. With rollback, tenants it changed are moved back to their versions by the controller (the rollout is aborting, then aborted); " +
			"without, they stay at the target version. The body may be left out (no rollback).",
		problems: rolloutActionProblems,
	},
	"getTenant": {params: []openapi.Parameter{includeDeletedParam}},
	"moveTenant": {
		description: "Make-before-break: the controller provisions the placement's workload on the target (compute_config's compute_provider) beside the source, " +
			"waits until it runs and its endpoints answer, holds for an approval when hold is set, switches the placement (and its endpoints) to it in one write, " +
			"then destroys the source. Every step is recorded: a landlord killed between two of them goes on from the step recorded. " +
			"The placement must be ready; while it moves, the tenant is updating and other changes are a 409 tenant_moving.",
		problems: moveProblems,
	},
	"approveMove": {
		description: "A move asked for with hold switches once its target runs and answers, and this approval is given. The body may be left out for a tenant of one placement.",
		problems:    moveProblems,
	},
	"cancelMove": {
		description: "Before the switch only: the target is destroyed, the source serves on untouched. After the switch, move the placement back instead. The body may be left out for a tenant of one placement.",
		problems:    moveProblems,
	},
	"replaceTenant": {
		description: "labels and annotations left out (or null) are kept; {} removes them all. plan and maintenance_window left out (or null) are kept. " + planDoc +
			"A change that alters nothing answers 200 without bumping generation.",
		params:   []openapi.Parameter{changeDryRunParam},
		success:  changeSuccess,
		problems: changeProblems,
	},
	"patchTenant": {
		description: "plan null makes the tenant leave its plan (its compute_config alone, over the defaults, must then be valid); plan {\"pinned\": true} pins it at its version, " +
			"{\"version\": 3, \"pinned\": true} pins it at version 3, {\"pinned\": false} lets rollouts move it again; a new plan name starts at that plan's current version unless version is given. " +
			"maintenance_window null removes the window. " + planDoc + "A change that alters nothing answers 200 without bumping generation.",
		params:   []openapi.Parameter{changeDryRunParam},
		success:  changeSuccess,
		problems: changeProblems,
	},
	"deleteTenant": {
		description: "The controller destroys the tenant's workload; the tenant keeps its record and history. Repeating the request is harmless.",
		params:      []openapi.Parameter{forgetParam},
		success:     "deletion is under way; the tenant as it is now",
		also:        []openapi.Response{{Status: http.StatusOK, Description: "forget=true: the tenant, deleted", Body: wire.Tenant{}}},
		problems:    map[int][]string{http.StatusConflict: {wire.CodeVersionConflict}, http.StatusServiceUnavailable: {wire.CodeStorageUnavailable}},
	},
	"listTenantEvents": {
		description: "Oldest first, or newest first with order=newest; a deleted tenant's history too.",
		params:      []openapi.Parameter{eventOrderParam, placementParam, pageSizeParam, pageTokenParam},
	},
	"getTenantStatus": {
		description: "Asks the provider now; nothing is cached.",
		params:      []openapi.Parameter{statusPlacementParam},
		problems: map[int][]string{
			http.StatusNotFound:            {wire.CodeWorkloadNotFound},
			http.StatusBadGateway:          {wire.CodeUnavailable},
			http.StatusUnprocessableEntity: {wire.CodeProviderNotFound},
		},
	},
}
