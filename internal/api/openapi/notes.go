package openapi

import (
	"reflect"
	"slices"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// This is the one file that names the wire types: what each means, and what
// its fields mean beyond their names.

// problemBody is the body of every problem response.
var problemBody = wire.Problem{}

// eventTypes are the event types, in the catalogue's order.
func eventTypes() []string {
	out := make([]string, len(events.Types))
	for i, t := range events.Types {
		out[i] = string(t)
	}
	return out
}

// typeNotes describe the wire types.
var typeNotes = map[reflect.Type]string{
	reflect.TypeFor[wire.CloudEvent]():                "An event as landlord publishes it: a CloudEvents 1.0 event in the structured JSON format, as webhooks deliver it (application/cloudevents+json) and the feed lists it. docs/events.md is the catalogue.",
	reflect.TypeFor[wire.EventFeed]():                 "A page of the event feed, oldest first.",
	reflect.TypeFor[wire.Subscription]():              "A webhook subscription: where events are posted, which ones, and whether it is enabled; its secrets by their dates only.",
	reflect.TypeFor[wire.SecretInfo]():                "One of a subscription's signing secrets: when it was given, and when it stops signing (after a rotation).",
	reflect.TypeFor[wire.DeliveryCount]():             "A subscription's deliveries by state.",
	reflect.TypeFor[wire.CreateSubscriptionRequest](): "A new webhook subscription.",
	reflect.TypeFor[wire.UpdateSubscriptionRequest](): "A change to a subscription; fields left out are kept.",
	reflect.TypeFor[wire.RotateSecretRequest]():       "A subscription's new signing secret.",
	reflect.TypeFor[wire.RedeliverRequest]():          "Which events to send again: one by id, or a time range.",
	reflect.TypeFor[wire.RedeliverResponse]():         "How many deliveries were made pending.",
	reflect.TypeFor[wire.SubscriptionList]():          "Every subscription, in name order.",
	reflect.TypeFor[wire.Delivery]():                  "An event sent, or to be sent, to a subscription, with where it stands.",
	reflect.TypeFor[wire.DeliveryAttempt]():           "One attempt at a delivery: when, the receiver's answer (status, the start of its body) or the error, and how long it took.",
	reflect.TypeFor[wire.DeliveryList]():              "A page of a subscription's deliveries, newest first.",
	reflect.TypeFor[wire.Tenant]():                    "A tenant: its desired state (compute_config, labels, annotations; generation counts its changes) and its observed state (status, observed_generation, resource_ids, endpoints).",
	reflect.TypeFor[wire.CreateTenantRequest]():       "A new tenant.",
	reflect.TypeFor[wire.ReplaceTenantRequest]():      "A tenant's whole desired state. A secret value sent back as \"[redacted]\" keeps the stored secret.",
	reflect.TypeFor[wire.TenantList]():                "A page of tenants.",
	reflect.TypeFor[wire.Placement]():                 "One part of a tenant declared with placements: a compute provider and its config, with the placement's own observed state (status, endpoints, drift). Its workload is known to the provider by workload_id and workload_name.",
	reflect.TypeFor[wire.Move]():                      "A placement's move in progress, make-before-break: the target is provisioned beside the source (other until the switch), awaited until it runs and its endpoints answer, switched to after an approval when hold is set, and the source (other after the switch) destroyed.",
	reflect.TypeFor[wire.MoveRequest]():               "A move of a placement: placement names it (optional for a tenant of one), compute_config is its config on the target, whose compute_provider chooses the target provider; hold waits for an approval before the switch.",
	reflect.TypeFor[wire.MoveActionRequest]():         "The placement whose move to approve or cancel; optional for a tenant of one placement.",
	reflect.TypeFor[wire.PlacementRequest]():          "A placement as a create or a replace declares it: a name (a lowercase DNS label of 1 to 30 characters starting with a letter, unique in the tenant) and a compute_config, whose compute_provider chooses its provider.",
	reflect.TypeFor[wire.Event]():                     "One entry of a tenant's history: a transition or a change through the API.",
	reflect.TypeFor[wire.EventList]():                 "A page of a tenant's history, oldest first.",
	reflect.TypeFor[wire.Provider]():                  "An enabled compute provider.",
	reflect.TypeFor[wire.ProviderList]():              "The enabled compute providers.",
	reflect.TypeFor[wire.ComputeConfig]():             "What a provider accepts as a tenant's compute_config.",
	reflect.TypeFor[wire.Health]():                    "Whether the process, or each of its dependencies, is ready.",
	reflect.TypeFor[wire.Identity]():                  "Who a token is: its name, the actor recorded in history (anonymous on a server without tokens), and its role: admin may read and write, reader may only read.",
	reflect.TypeFor[wire.Problem]():                   "An RFC 9457 problem detail with a stable machine-readable code and every field at fault.",
	reflect.TypeFor[wire.FieldError]():                "One problem with one field of a request: a JSON pointer into the body, or the name of a parameter or header.",
	reflect.TypeFor[wire.ComputeStatus]():             "The live state of a tenant's workload, as its provider reports it.",
	reflect.TypeFor[wire.ContainerStatus]():           "The live state of one container of a workload.",
	reflect.TypeFor[wire.Endpoint]():                  "An address where a container port can be reached.",
	reflect.TypeFor[wire.Drift]():                     "The last drift found in a tenant's workload: what differed from its declared state (a field changed or an object deleted behind landlord's back, the workload gone or not running), when, and what was done about it.",
	reflect.TypeFor[wire.DriftDifference]():           "One path that differed from the declared state, with the expected and found values; a secret's value reads \"[redacted]\".",
	reflect.TypeFor[wire.TenantPlan]():                "The plan a tenant follows: its effective config is the provider's defaults, then this plan version's config, then the tenant's compute_config.",
	reflect.TypeFor[wire.PlanChoice]():                "The plan a tenant is to follow. name is required, except in a patch of a tenant that follows a plan; version left out is the plan's current version for a tenant that starts to follow it, else the tenant's; pinned keeps the tenant at its version (rollouts leave it alone).",
	reflect.TypeFor[wire.MaintenanceWindow]():         "A weekly window in which rollouts may change the tenant: it opens at start on each of days, in time_zone, and closes at end (the next day when end is at or before start).",
	reflect.TypeFor[wire.ConfigLayers]():              "The layers merged into effective_config, each with secrets redacted: the operator's defaults, then the plan version's config, then the tenant's compute_config; null for a layer that is absent.",
	reflect.TypeFor[wire.Plan]():                      "A plan: a named line of compute_config versions for one provider.",
	reflect.TypeFor[wire.PlanList]():                  "Every plan, in name order.",
	reflect.TypeFor[wire.CreatePlanRequest]():         "A new plan.",
	reflect.TypeFor[wire.PlanVersion]():               "A published version of a plan; it never changes.",
	reflect.TypeFor[wire.PlanVersionList]():           "A plan's versions, oldest first.",
	reflect.TypeFor[wire.PublishVersionRequest]():     "A plan's next version.",
	reflect.TypeFor[wire.WaveSpec]():                  "A wave of a rollout: from the tenants no earlier wave took, those matching selector, at most count of them or percent of the rollout's tenants (rounded up).",
	reflect.TypeFor[wire.CreateRolloutRequest]():      "A rollout of a plan to one of its versions.",
	reflect.TypeFor[wire.AbortRolloutRequest]():       "How to abort a rollout.",
	reflect.TypeFor[wire.Rollout]():                   "A rollout and where it stands.",
	reflect.TypeFor[wire.RolloutWave]():               "A wave of a rollout as assigned when it started.",
	reflect.TypeFor[wire.WaitingTenant]():             "A tenant of the wave in progress that waits for its maintenance window to open.",
	reflect.TypeFor[wire.RolloutList]():               "Rollouts, newest first.",
	reflect.TypeFor[wire.RolloutMember]():             "A tenant of a rollout.",
	reflect.TypeFor[wire.RolloutMemberList]():         "A rollout's tenants, in wave order.",
	reflect.TypeFor[wire.RolloutEvent]():              "One entry of a rollout's history.",
	reflect.TypeFor[wire.RolloutEventList]():          "A rollout's history, oldest first.",
	reflect.TypeFor[wire.ConfigChange]():              "One difference between a tenant's effective configs; secret values are never shown (a changed secret is named only).",
	reflect.TypeFor[wire.FleetPlan]():                 "What a rollout would do, tenant by tenant: the answer to a dry run.",
	reflect.TypeFor[wire.FleetPlanWave]():             "A wave of a fleet plan with its tenants.",
	reflect.TypeFor[wire.FleetPlanTenant]():           "What a rollout would do to one tenant.",
	reflect.TypeFor[wire.FleetPlanDiff]():             "How the effective configs of some tenants would change, shown once for all of them. A value longer than 256 bytes is cut, ending with \"… (N bytes)\"; a diff lists at most 100 changes, and the diffs of a fleet plan at most 1 MiB of them; changes_omitted counts the rest.",
	reflect.TypeFor[wire.FleetPlanCounts]():           "The sums of a fleet plan.",
	reflect.TypeFor[wire.PlanTenant]():                "A tenant of the plan that the rollout leaves alone.",
}

// fieldNote describes one field of a wire type and may tighten its schema.
type fieldNote struct {
	doc    string
	enum   []string
	object bool // a JSON object, where the Go type holds any JSON
}

type fieldKey struct {
	t    reflect.Type
	name string // the JSON name
}

var (
	tenantType  = reflect.TypeFor[wire.Tenant]()
	createType  = reflect.TypeFor[wire.CreateTenantRequest]()
	replaceType = reflect.TypeFor[wire.ReplaceTenantRequest]()
)

func tenantStatuses() []string { return slices.Clone(wire.TenantStatuses) }

func rolloutStates() []string {
	return []string{string(fleet.StateRunning), string(fleet.StatePaused), string(fleet.StateHalted), string(fleet.StateAborting), string(fleet.StateAborted), string(fleet.StateCompleted)}
}

func memberStates() []string {
	return []string{string(fleet.MemberPending), string(fleet.MemberChanging), string(fleet.MemberDone), string(fleet.MemberFailed), string(fleet.MemberSkipped), string(fleet.MemberRolledBack)}
}

func rolloutEventTypes() []string {
	var out []string
	for _, t := range []fleet.EventType{fleet.EventStarted, fleet.EventWaveStarted, fleet.EventWaveBaking, fleet.EventChanged, fleet.EventDone, fleet.EventFailed,
		fleet.EventSkipped, fleet.EventRolledBack, fleet.EventPaused, fleet.EventResumed, fleet.EventHalted, fleet.EventAborted, fleet.EventCompleted} {
		out = append(out, string(t))
	}
	return out
}

func driftKinds() []string {
	out := make([]string, len(provider.DriftKinds))
	for i, k := range provider.DriftKinds {
		out[i] = string(k)
	}
	return out
}

const configDoc = "The provider's tenant config; GET /v1/compute/config gives its JSON Schema. " +
	"\"" + wire.SelectionKey + "\" in it (or in labels or annotations) chooses the provider; the default one otherwise. " +
	"Validated after the operator's defaults are merged under it."

// fieldNotes describe the fields whose name does not say it all.
var fieldNotes = map[fieldKey]fieldNote{
	{reflect.TypeFor[wire.CloudEvent](), "type"}: {doc: "What the event reports.", enum: eventTypes()},
	{reflect.TypeFor[wire.CloudEvent](), "data"}: {doc: "For a tenant's events (landlord.tenant.*, landlord.placement.moved), {\"tenant\": the tenant as GET /v1/tenants/{id} showed it when the event was written, secrets redacted, \"event\": the entry of its history the event stands for, \"changed\": on landlord.tenant.changed, the fields the change changed}. " +
		"For a rollout's, {\"rollout\": {id, plan, state, wave, rollback, message, spec, created_by}, \"event\": {seq, type, wave, message, actor}}. For a plan version's, {plan, version, message, actor, config}.", object: true},
	{reflect.TypeFor[wire.Delivery](), "state"}: {doc: "pending: to be sent, or sent again after a failure; delivered: a receiver answered 2xx; failed: given up after the retry horizon (the subscription was disabled).",
		enum: []string{"pending", "delivered", "failed"}},
	{tenantType, "id"}:                                             {doc: "The tenant's id, a UUID; it never changes."},
	{tenantType, "name"}:                                           {doc: "Unique among tenants that are not deleted."},
	{tenantType, "compute_provider"}:                               {doc: "The provider chosen at creation; it never changes."},
	{tenantType, "compute_config"}:                                 {doc: "The config as submitted, with secret (writeOnly) values replaced by \"[redacted]\"."},
	{tenantType, "effective_config"}:                               {doc: "Dry runs only: the config the provider would get, the operator's defaults (and the plan version's config) merged under it, secrets redacted.", object: true},
	{tenantType, "status"}:                                         {doc: "Where the tenant is in its lifecycle.", enum: tenantStatuses()},
	{tenantType, "status_message"}:                                 {doc: "Why the tenant is in its status, such as the error that failed it."},
	{tenantType, "generation"}:                                     {doc: "Counts the changes of the desired state."},
	{tenantType, "observed_generation"}:                            {doc: "The generation the workload was last brought to; equal to generation when it is up to date."},
	{tenantType, "version"}:                                        {doc: "Counts every write; the ETag, for If-Match."},
	{tenantType, "attempts"}:                                       {doc: "Failed attempts at the current generation."},
	{tenantType, "retry_at"}:                                       {doc: "When the next attempt is due, after a failed one."},
	{tenantType, "resource_ids"}:                                   {doc: "The provider's ids of what it created, for operators."},
	{reflect.TypeFor[wire.Drift](), "policy"}:                      {doc: "What was done: repair put the declared state back; observe only reported it (the drift field of the compute_config).", enum: []string{string(provider.DriftRepair), string(provider.DriftObserve)}},
	{reflect.TypeFor[wire.Drift](), "generation"}:                  {doc: "The generation the workload was compared with."},
	{reflect.TypeFor[wire.Drift](), "resolved_at"}:                 {doc: "When a check found the workload as declared again (repaired, or undone by hand); absent while the drift is open."},
	{reflect.TypeFor[wire.DriftDifference](), "kind"}:              {doc: "What sort of difference it is.", enum: driftKinds()},
	{tenantType, "placements"}:                                     {doc: "Present for a tenant declared with placements, absent for one of the single placement \"default\" (declared with compute_config). compute_provider, compute_config, resource_ids and drift are then the first placement's, endpoints every placement's, and status summarizes the placements': ready when every one is ready."},
	{reflect.TypeFor[wire.Placement](), "compute_provider"}:        {doc: "The provider the placement runs on; it changes only by a move."},
	{reflect.TypeFor[wire.Placement](), "compute_config"}:          {doc: "The placement's config as submitted, with secret (writeOnly) values replaced by \"[redacted]\".", object: true},
	{reflect.TypeFor[wire.Placement](), "effective_config"}:        {doc: "Dry runs only: the config the provider would get, secrets redacted.", object: true},
	{reflect.TypeFor[wire.Placement](), "status"}:                  {doc: "Where the placement is in its lifecycle.", enum: tenantStatuses()},
	{reflect.TypeFor[wire.Placement](), "removed"}:                 {doc: "The placement was left out of a change: its workload is being destroyed, and the placement goes when that is done."},
	{reflect.TypeFor[wire.PlacementRequest](), "compute_config"}:   {doc: configDoc, object: true},
	{reflect.TypeFor[wire.MoveRequest](), "compute_config"}:        {doc: "The placement's config on the target; its compute_provider chooses the target provider. A secret sent as \"[redacted]\" keeps the placement's value.", object: true},
	{reflect.TypeFor[wire.Move](), "step"}:                         {doc: "Where the move is.", enum: []string{"provisioning", "awaiting_approval", "destroying_source", "cancelling"}},
	{reflect.TypeFor[wire.Event](), "placement"}:                   {doc: "The placement the event is about, for a tenant with placements; absent for the tenant as a whole."},
	{tenantType, "deleted_at"}:                                     {doc: "When the tenant was deleted; its name may be reused since."},
	{createType, "name"}:                                           {doc: "A lowercase DNS label (1 to 63 of a-z, 0-9 and -, starting and ending with a letter or digit) that is not a UUID."},
	{createType, "compute_config"}:                                 {doc: configDoc + " Declares a tenant of one placement (\"default\"); give it or placements.", object: true},
	{createType, "placements"}:                                     {doc: "Declares a tenant of one or more named placements (at most 8), each on its provider; give it or compute_config. With plan, every placement runs on the plan's provider, each over its layer of the plan (the version's config with its fragment in placements, if any)."},
	{replaceType, "placements"}:                                    {doc: "Every placement of a tenant with placements, as it is to be: a placement left out is removed (its workload destroyed); a new one is provisioned; a placement's provider cannot change."},
	{replaceType, "compute_config"}:                                {doc: configDoc + " The provider cannot change.", object: true},
	{replaceType, "labels"}:                                        {doc: "The tenant's labels, all of them. Left out (or null), the tenant keeps the labels it has; {} removes them all."},
	{replaceType, "annotations"}:                                   {doc: "The tenant's annotations, all of them. Left out (or null), the tenant keeps the annotations it has; {} removes them all."},
	{reflect.TypeFor[wire.TenantList](), "next_page_token"}:        {doc: "Pass it as page_token for the next page; empty on the last page."},
	{reflect.TypeFor[wire.EventList](), "next_page_token"}:         {doc: "Pass it as page_token for the next page; empty on the last page."},
	{reflect.TypeFor[wire.Event](), "from"}:                        {doc: "The status before a transition.", enum: tenantStatuses()},
	{reflect.TypeFor[wire.Event](), "to"}:                          {doc: "The status after a transition.", enum: tenantStatuses()},
	{reflect.TypeFor[wire.Event](), "actor"}:                       {doc: "Who made the change: a token's name, \"anonymous\", or the controller."},
	{reflect.TypeFor[wire.Provider](), "default"}:                  {doc: "Tenants that choose no provider get this one."},
	{reflect.TypeFor[wire.Provider](), "message"}:                  {doc: "Why the provider is not healthy."},
	{reflect.TypeFor[wire.Provider](), "capabilities"}:             {doc: capabilitiesDoc},
	{reflect.TypeFor[wire.ComputeConfig](), "capabilities"}:        {doc: capabilitiesDoc},
	{reflect.TypeFor[wire.ComputeConfig](), "schema"}:              {doc: "The JSON Schema (draft 2020-12) of compute_config; writeOnly fields are secrets.", object: true},
	{reflect.TypeFor[wire.ComputeConfig](), "defaults"}:            {doc: "The operator's defaults, merged under each tenant's compute_config; null when there are none."},
	{reflect.TypeFor[wire.Health](), "checks"}:                     {doc: "Each check by name: \"ok\" or \"failing\". The cause of a failure is logged, not shown."},
	{reflect.TypeFor[wire.Problem](), "type"}:                      {doc: "A URI naming the kind of problem."},
	{reflect.TypeFor[wire.Problem](), "code"}:                      {doc: "Stable across releases; clients branch on it."},
	{reflect.TypeFor[wire.Problem](), "errors"}:                    {doc: "The fields at fault: every one, up to 100."},
	{reflect.TypeFor[wire.Problem](), "errors_omitted"}:            {doc: "How many more fields are at fault than errors lists; absent when it lists them all."},
	{reflect.TypeFor[wire.Problem](), "instance"}:                  {doc: "The request id (X-Request-ID), which finds the request in the server's log."},
	{reflect.TypeFor[wire.Problem](), "error"}:                     {doc: "detail (title when there is no detail), then the first of errors and how many more there are, for clients that show only an error member."},
	{reflect.TypeFor[wire.FieldError](), "pointer"}:                {doc: "The RFC 6901 JSON pointer of the field in the request body."},
	{reflect.TypeFor[wire.FieldError](), "parameter"}:              {doc: "The query parameter or header at fault."},
	{reflect.TypeFor[wire.ComputeStatus](), "generation"}:          {doc: "The generation the running workload was built from, when the provider records it."},
	{reflect.TypeFor[wire.TenantPlan](), "version"}:                {doc: "The plan version the tenant runs."},
	{reflect.TypeFor[wire.TenantPlan](), "pinned"}:                 {doc: "The tenant stays at version: rollouts leave it alone until it is unpinned."},
	{reflect.TypeFor[wire.PlanChoice](), "version"}:                {doc: "A version of the plan, from 1; left out: the plan's current version for a tenant that starts to follow the plan, else the tenant's."},
	{reflect.TypeFor[wire.PlanChoice](), "pinned"}:                 {doc: "Keep the tenant at this version: rollouts leave it alone."},
	{reflect.TypeFor[wire.MaintenanceWindow](), "days"}:            {doc: "mon, tue, wed, thu, fri, sat, sun; empty or left out is every day."},
	{reflect.TypeFor[wire.MaintenanceWindow](), "start"}:           {doc: "When the window opens, HH:MM (24-hour)."},
	{reflect.TypeFor[wire.MaintenanceWindow](), "end"}:             {doc: "When it closes, HH:MM; at or before start closes the next day."},
	{reflect.TypeFor[wire.MaintenanceWindow](), "time_zone"}:       {doc: "An IANA time zone name such as Europe/Berlin; UTC when left out. Local (the zone of each landlord process) is refused."},
	{reflect.TypeFor[wire.ConfigLayers](), "defaults"}:             {doc: "The operator's defaults for the provider; null when there are none."},
	{reflect.TypeFor[wire.ConfigLayers](), "plan"}:                 {doc: "The plan version's config; null for a tenant that follows no plan."},
	{reflect.TypeFor[wire.ConfigLayers](), "tenant"}:               {doc: "The tenant's own compute_config (its overrides, for a tenant that follows a plan)."},
	{reflect.TypeFor[wire.Plan](), "name"}:                         {doc: "A lowercase DNS label, unique among plans."},
	{reflect.TypeFor[wire.Plan](), "provider"}:                     {doc: "The compute provider the plan's versions are for; a tenant on another provider cannot follow the plan. It never changes."},
	{reflect.TypeFor[wire.Plan](), "latest_version"}:               {doc: "The newest version; 0 before the first is published."},
	{reflect.TypeFor[wire.Plan](), "current_version"}:              {doc: "The version a tenant that starts to follow the plan gets: the first version, then the target of each rollout that completes."},
	{reflect.TypeFor[wire.CreatePlanRequest](), "name"}:            {doc: "A lowercase DNS label (1 to 63 of a-z, 0-9 and -, starting and ending with a letter or digit), unique among plans."},
	{reflect.TypeFor[wire.CreatePlanRequest](), "provider"}:        {doc: "An enabled compute provider; the server's default provider when left out."},
	{reflect.TypeFor[wire.CreatePlanRequest](), "description"}:     {doc: "At most 1,024 bytes."},
	{reflect.TypeFor[wire.PlanVersion](), "config"}:                {doc: "The fragment of compute_config the version sets.", object: true},
	{reflect.TypeFor[wire.PublishVersionRequest](), "config"}:      {doc: "The fragment of compute_config the version sets: fields of the plan provider's schema with valid values; no secrets (writeOnly fields) and no compute_provider.", object: true},
	{reflect.TypeFor[wire.PublishVersionRequest](), "message"}:     {doc: "What changed, at most 1,024 bytes."},
	{reflect.TypeFor[wire.WaveSpec](), "name"}:                     {doc: "Unique among the waves; wave-N (its position, from 1) when left out. rest names the wave of the tenants no wave takes: a wave so named must be the last, without selector, count or percent."},
	{reflect.TypeFor[wire.WaveSpec](), "selector"}:                 {doc: "Labels a tenant must all have; left out: every tenant."},
	{reflect.TypeFor[wire.WaveSpec](), "count"}:                    {doc: "At most this many tenants, from 1; left out: no limit (0 is refused). Not with percent."},
	{reflect.TypeFor[wire.WaveSpec](), "percent"}:                  {doc: "At most this percentage of the rollout's tenants, rounded up, 1 to 100; left out: no limit (0 is refused). Not with count."},
	{reflect.TypeFor[wire.WaveSpec](), "max_in_flight"}:            {doc: "How many of the wave's tenants may be changing at once, from 1; left out: all of them (0 is refused)."},
	{reflect.TypeFor[wire.CreateRolloutRequest](), "plan"}:         {doc: "The plan whose tenants move."},
	{reflect.TypeFor[wire.CreateRolloutRequest](), "from_version"}: {doc: "Only tenants on this version, from 1; left out: every tenant of the plan on another version than to_version (0 is refused)."},
	{reflect.TypeFor[wire.CreateRolloutRequest](), "to_version"}:   {doc: "The version the tenants move to, from 1 (of to_plan, for a fleet move); that plan's latest when left out (0 is refused)."},
	{reflect.TypeFor[wire.CreateRolloutRequest](), "to_plan"}:      {doc: "Makes the rollout a fleet move: each tenant of the plan moves (make-before-break: provisioned on the target, switched once it answers, then the source destroyed) to follow this plan, on its provider, with its own compute_config less compute_provider. Left out: a rollout of the plan's versions."},
	{reflect.TypeFor[wire.CreateRolloutRequest](), "waves"}:        {doc: "The waves, in order, at most 100; tenants no wave takes form a last wave, rest (unless the last wave is so named). Left out: one wave of every tenant."},
	{reflect.TypeFor[wire.CreateRolloutRequest](), "bake"}:         {doc: "How long every tenant of a wave must stay ready before the next wave starts: a Go duration such as 10m or 1h30m; 0 when left out."},
	{reflect.TypeFor[wire.CreateRolloutRequest](), "max_failures"}: {doc: "The failure budget: the rollout halts when more tenants than this have failed; 0 when left out."},
	{reflect.TypeFor[wire.CreateRolloutRequest](), "deadline"}:     {doc: "How long a changed tenant has to become ready at its new generation before it counts as failed: a positive Go duration; 15m when left out."},
	{reflect.TypeFor[wire.AbortRolloutRequest](), "rollback"}:      {doc: "Move the tenants the rollout changed back to their versions."},
	{reflect.TypeFor[wire.Rollout](), "state"}:                     {doc: "running, paused, halted (the failure budget ran out) and aborting have not finished; aborted and completed have.", enum: rolloutStates()},
	{reflect.TypeFor[wire.Rollout](), "from_version"}:              {doc: "The version the rollout was limited to, if it was."},
	{reflect.TypeFor[wire.Rollout](), "wave"}:                      {doc: "The index of the wave in progress; the number of waves once every wave is done."},
	{reflect.TypeFor[wire.Rollout](), "wave_name"}:                 {doc: "The name of the wave in progress; absent once every wave is done."},
	{reflect.TypeFor[wire.Rollout](), "bake"}:                      {doc: "The bake time of each wave, as a Go duration."},
	{reflect.TypeFor[wire.Rollout](), "deadline"}:                  {doc: "Each changed tenant's deadline to become ready, as a Go duration."},
	{reflect.TypeFor[wire.Rollout](), "counts"}:                    {doc: "The rollout's tenants by state: pending, changing, done, failed, skipped, rolled_back."},
	{reflect.TypeFor[wire.Rollout](), "failed"}:                    {doc: "The names of the tenants that failed."},
	{reflect.TypeFor[wire.Rollout](), "waiting"}:                   {doc: "Pending tenants of the wave in progress, still following the plan, whose maintenance window is closed; not shown in lists."},
	{reflect.TypeFor[wire.Rollout](), "bake_from"}:                 {doc: "When every tenant of the wave in progress settled: its bake started then."},
	{reflect.TypeFor[wire.Rollout](), "rollback"}:                  {doc: "The abort asked for the changed tenants to be rolled back."},
	{reflect.TypeFor[wire.Rollout](), "message"}:                   {doc: "Why the rollout is as it is: who paused it, which tenants failed."},
	{reflect.TypeFor[wire.Rollout](), "version"}:                   {doc: "Counts every write; the ETag, for If-Match."},
	{reflect.TypeFor[wire.RolloutWave](), "size"}:                  {doc: "How many tenants the wave took."},
	{reflect.TypeFor[wire.RolloutWave](), "counts"}:                {doc: "The wave's tenants by state."},
	{reflect.TypeFor[wire.WaitingTenant](), "opens_at"}:            {doc: "When the window next opens; absent when it cannot be known."},
	{reflect.TypeFor[wire.RolloutMember](), "state"}:               {doc: "Where the tenant is in the rollout.", enum: memberStates()},
	{reflect.TypeFor[wire.RolloutMember](), "from_version"}:        {doc: "The plan version the tenant ran when the rollout took it."},
	{reflect.TypeFor[wire.RolloutMember](), "generation"}:          {doc: "The tenant's generation that carries the target version; absent until it is changed."},
	{reflect.TypeFor[wire.RolloutEvent](), "seq"}:                  {doc: "The event's number in the rollout's history; pass it as after to read what follows."},
	{reflect.TypeFor[wire.RolloutEvent](), "type"}:                 {doc: "What happened.", enum: rolloutEventTypes()},
	{reflect.TypeFor[wire.RolloutEvent](), "actor"}:                {doc: "Who did it: a token's name, or the controller."},
	{reflect.TypeFor[wire.FleetPlan](), "pinned"}:                  {doc: "Tenants pinned to a version: left alone."},
	{reflect.TypeFor[wire.FleetPlan](), "current"}:                 {doc: "Tenants already at the target version (or, with from_version, on another version): left alone."},
	{reflect.TypeFor[wire.FleetPlan](), "diffs"}:                   {doc: "How the tenants' effective configs would change: each different set of changes once, in the order of the waves' tenants."},
	{reflect.TypeFor[wire.FleetPlanTenant](), "diff"}:              {doc: "The id of the tenant's changes in diffs; absent when its effective config does not change."},
	{reflect.TypeFor[wire.FleetPlanDiff](), "id"}:                  {doc: "What a tenant's diff refers to: d1, d2, …"},
	{reflect.TypeFor[wire.FleetPlanDiff](), "tenants"}:             {doc: "How many tenants' configs change so."},
	{reflect.TypeFor[wire.FleetPlanDiff](), "changes"}:             {doc: "The changes, secrets named only; empty when the fleet plan's diffs listed 1 MiB of changes before this one."},
	{reflect.TypeFor[wire.FleetPlanDiff](), "changes_omitted"}:     {doc: "How many more changes there are than changes lists; absent when it lists them all."},
	{reflect.TypeFor[wire.FleetPlanTenant](), "action"}:            {doc: "What the provider would do to the workload.", enum: []string{wire.ActionNone, wire.ActionInPlace, wire.ActionReplace, wire.ActionMove}},
	{reflect.TypeFor[wire.FleetPlanTenant](), "window_open"}:       {doc: "Whether the tenant's maintenance window is open now (always, without one); a rollout changes it only while it is."},
	{reflect.TypeFor[wire.FleetPlanTenant](), "window_opens_at"}:   {doc: "When its window next opens, when it is closed now."},
	{reflect.TypeFor[wire.FleetPlanCounts](), "waves"}:             {doc: "The tenants of each wave, by name."},
	{reflect.TypeFor[wire.FleetPlanCounts](), "tenants"}:           {doc: "The tenants the rollout would change."},
	{reflect.TypeFor[wire.FleetPlanCounts](), "out_of_window"}:     {doc: "Tenants whose maintenance window is closed now."},
	{reflect.TypeFor[wire.FleetPlanCounts](), "actions"}:           {doc: "The tenants by the provider's action."},
	{reflect.TypeFor[wire.PlanTenant](), "version"}:                {doc: "The plan version the tenant runs."},
	{reflect.TypeFor[wire.Endpoint](), "address"}:                  {doc: "host:port where the port answers; a provider that runs nothing (mock) reports a URL whose scheme says so, such as mock://acme/app:80"},
}

const capabilitiesDoc = "What the provider supports, by capability: in_place_update, multiple_containers, secrets, published_ports, " +
	"public_networking, health_checks, scaling, volumes. A config asking for what it does not support is a 422 naming the field and the capability. " +
	"Absent when the provider declares nothing."
