package api

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// The schemas of the OpenAPI document are generated from the wire types by
// openapi3gen. Two things are added by hand, because reflection cannot see
// them: what a type or field means (Go comments are gone at run time), and a
// few tighter schemas (an enum, "compute_config is an object"). A note that
// names no field fails the build of the document, so notes cannot outlive
// their fields.

// typeNotes describe the wire types.
var typeNotes = map[reflect.Type]string{
	reflect.TypeFor[Tenant]():                "A tenant: its desired state (compute_config, labels, annotations; generation counts its changes) and its observed state (status, observed_generation, resource_ids, endpoints).",
	reflect.TypeFor[CreateTenantRequest]():   "A new tenant.",
	reflect.TypeFor[ReplaceTenantRequest]():  "A tenant's whole desired state. A secret value sent back as \"[redacted]\" keeps the stored secret.",
	reflect.TypeFor[TenantList]():            "A page of tenants.",
	reflect.TypeFor[Event]():                 "One entry of a tenant's history: a transition or a change through the API.",
	reflect.TypeFor[EventList]():             "A page of a tenant's history, oldest first.",
	reflect.TypeFor[Provider]():              "An enabled compute provider.",
	reflect.TypeFor[ProviderList]():          "The enabled compute providers.",
	reflect.TypeFor[ComputeConfig]():         "What a provider accepts as a tenant's compute_config.",
	reflect.TypeFor[Health]():                "Whether the process, or each of its dependencies, is ready.",
	reflect.TypeFor[Identity]():              "Who a token is: its name, the actor recorded in history (anonymous on a server without tokens), and its role: admin may read and write, reader may only read.",
	reflect.TypeFor[Problem]():               "An RFC 9457 problem detail with a stable machine-readable code and every field at fault.",
	reflect.TypeFor[FieldError]():            "One problem with one field of a request: a JSON pointer into the body, or the name of a parameter or header.",
	reflect.TypeFor[ComputeStatus]():         "The live state of a tenant's workload, as its provider reports it.",
	reflect.TypeFor[wire.ContainerStatus]():  "The live state of one container of a workload.",
	reflect.TypeFor[wire.Endpoint]():         "An address where a container port can be reached.",
	reflect.TypeFor[wire.Drift]():            "The last drift found in a tenant's workload: what differed from its declared state (a field changed or an object deleted behind landlord's back, the workload gone or not running), when, and what was done about it.",
	reflect.TypeFor[wire.DriftDifference]():  "One path that differed from the declared state, with the expected and found values; a secret's value reads \"[redacted]\".",
	reflect.TypeFor[TenantPlan]():            "The plan a tenant follows: its effective config is the provider's defaults, then this plan version's config, then the tenant's compute_config.",
	reflect.TypeFor[PlanChoice]():            "The plan a tenant is to follow. name is required, except in a patch of a tenant that follows a plan; version left out is the plan's current version for a tenant that starts to follow it, else the tenant's; pinned keeps the tenant at its version (rollouts leave it alone).",
	reflect.TypeFor[MaintenanceWindow]():     "A weekly window in which rollouts may change the tenant: it opens at start on each of days, in time_zone, and closes at end (the next day when end is at or before start).",
	reflect.TypeFor[ConfigLayers]():          "The layers merged into effective_config, each with secrets redacted: the operator's defaults, then the plan version's config, then the tenant's compute_config; null for a layer that is absent.",
	reflect.TypeFor[Plan]():                  "A plan: a named line of compute_config versions for one provider.",
	reflect.TypeFor[PlanList]():              "Every plan, in name order.",
	reflect.TypeFor[CreatePlanRequest]():     "A new plan.",
	reflect.TypeFor[PlanVersion]():           "A published version of a plan; it never changes.",
	reflect.TypeFor[PlanVersionList]():       "A plan's versions, oldest first.",
	reflect.TypeFor[PublishVersionRequest](): "A plan's next version.",
	reflect.TypeFor[WaveSpec]():              "A wave of a rollout: from the tenants no earlier wave took, those matching selector, at most count of them or percent of the rollout's tenants (rounded up).",
	reflect.TypeFor[CreateRolloutRequest]():  "A rollout of a plan to one of its versions.",
	reflect.TypeFor[AbortRolloutRequest]():   "How to abort a rollout.",
	reflect.TypeFor[Rollout]():               "A rollout and where it stands.",
	reflect.TypeFor[RolloutWave]():           "A wave of a rollout as assigned when it started.",
	reflect.TypeFor[WaitingTenant]():         "A tenant of the wave in progress that waits for its maintenance window to open.",
	reflect.TypeFor[RolloutList]():           "Rollouts, newest first.",
	reflect.TypeFor[RolloutMember]():         "A tenant of a rollout.",
	reflect.TypeFor[RolloutMemberList]():     "A rollout's tenants, in wave order.",
	reflect.TypeFor[RolloutEvent]():          "One entry of a rollout's history.",
	reflect.TypeFor[RolloutEventList]():      "A rollout's history, oldest first.",
	reflect.TypeFor[ConfigChange]():          "One difference between a tenant's effective configs; secret values are never shown (a changed secret is named only).",
	reflect.TypeFor[FleetPlan]():             "What a rollout would do, tenant by tenant: the answer to a dry run.",
	reflect.TypeFor[FleetPlanWave]():         "A wave of a fleet plan with its tenants.",
	reflect.TypeFor[FleetPlanTenant]():       "What a rollout would do to one tenant.",
	reflect.TypeFor[FleetPlanDiff]():         "How the effective configs of some tenants would change, shown once for all of them. A value longer than 256 bytes is cut, ending with \"… (N bytes)\"; a diff lists at most 100 changes, and the diffs of a fleet plan at most 1 MiB of them; changes_omitted counts the rest.",
	reflect.TypeFor[FleetPlanCounts]():       "The sums of a fleet plan.",
	reflect.TypeFor[PlanTenant]():            "A tenant of the plan that the rollout leaves alone.",
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
	tenantType  = reflect.TypeFor[Tenant]()
	createType  = reflect.TypeFor[CreateTenantRequest]()
	replaceType = reflect.TypeFor[ReplaceTenantRequest]()
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
	out := make([]string, len(compute.DriftKinds))
	for i, k := range compute.DriftKinds {
		out[i] = string(k)
	}
	return out
}

const configDoc = "The provider's tenant config; GET /v1/compute/config gives its JSON Schema. " +
	"\"" + compute.SelectionKey + "\" in it (or in labels or annotations) chooses the provider; the default one otherwise. " +
	"Validated after the operator's defaults are merged under it."

// fieldNotes describe the fields whose name does not say it all.
var fieldNotes = map[fieldKey]fieldNote{
	{tenantType, "id"}:                                        {doc: "The tenant's id, a UUID; it never changes."},
	{tenantType, "name"}:                                      {doc: "Unique among tenants that are not deleted."},
	{tenantType, "compute_provider"}:                          {doc: "The provider chosen at creation; it never changes."},
	{tenantType, "compute_config"}:                            {doc: "The config as submitted, with secret (writeOnly) values replaced by \"[redacted]\"."},
	{tenantType, "effective_config"}:                          {doc: "Dry runs only: the config the provider would get, the operator's defaults (and the plan version's config) merged under it, secrets redacted.", object: true},
	{tenantType, "status"}:                                    {doc: "Where the tenant is in its lifecycle.", enum: tenantStatuses()},
	{tenantType, "status_message"}:                            {doc: "Why the tenant is in its status, such as the error that failed it."},
	{tenantType, "generation"}:                                {doc: "Counts the changes of the desired state."},
	{tenantType, "observed_generation"}:                       {doc: "The generation the workload was last brought to; equal to generation when it is up to date."},
	{tenantType, "version"}:                                   {doc: "Counts every write; the ETag, for If-Match."},
	{tenantType, "attempts"}:                                  {doc: "Failed attempts at the current generation."},
	{tenantType, "retry_at"}:                                  {doc: "When the next attempt is due, after a failed one."},
	{tenantType, "resource_ids"}:                              {doc: "The provider's ids of what it created, for operators."},
	{reflect.TypeFor[wire.Drift](), "policy"}:                 {doc: "What was done: repair put the declared state back; observe only reported it (the drift field of the compute_config).", enum: []string{string(compute.DriftRepair), string(compute.DriftObserve)}},
	{reflect.TypeFor[wire.Drift](), "generation"}:             {doc: "The generation the workload was compared with."},
	{reflect.TypeFor[wire.Drift](), "resolved_at"}:            {doc: "When a check found the workload as declared again (repaired, or undone by hand); absent while the drift is open."},
	{reflect.TypeFor[wire.DriftDifference](), "kind"}:         {doc: "What sort of difference it is.", enum: driftKinds()},
	{tenantType, "deleted_at"}:                                {doc: "When the tenant was deleted; its name may be reused since."},
	{createType, "name"}:                                      {doc: "A lowercase DNS label (1 to 63 of a-z, 0-9 and -, starting and ending with a letter or digit) that is not a UUID."},
	{createType, "compute_config"}:                            {doc: configDoc, object: true},
	{replaceType, "compute_config"}:                           {doc: configDoc + " The provider cannot change.", object: true},
	{replaceType, "labels"}:                                   {doc: "The tenant's labels, all of them. Left out (or null), the tenant keeps the labels it has; {} removes them all."},
	{replaceType, "annotations"}:                              {doc: "The tenant's annotations, all of them. Left out (or null), the tenant keeps the annotations it has; {} removes them all."},
	{reflect.TypeFor[TenantList](), "next_page_token"}:        {doc: "Pass it as page_token for the next page; empty on the last page."},
	{reflect.TypeFor[EventList](), "next_page_token"}:         {doc: "Pass it as page_token for the next page; empty on the last page."},
	{reflect.TypeFor[Event](), "from"}:                        {doc: "The status before a transition.", enum: tenantStatuses()},
	{reflect.TypeFor[Event](), "to"}:                          {doc: "The status after a transition.", enum: tenantStatuses()},
	{reflect.TypeFor[Event](), "actor"}:                       {doc: "Who made the change: a token's name, \"anonymous\", or the controller."},
	{reflect.TypeFor[Provider](), "default"}:                  {doc: "Tenants that choose no provider get this one."},
	{reflect.TypeFor[Provider](), "message"}:                  {doc: "Why the provider is not healthy."},
	{reflect.TypeFor[Provider](), "capabilities"}:             {doc: capabilitiesDoc},
	{reflect.TypeFor[ComputeConfig](), "capabilities"}:        {doc: capabilitiesDoc},
	{reflect.TypeFor[ComputeConfig](), "schema"}:              {doc: "The JSON Schema (draft 2020-12) of compute_config; writeOnly fields are secrets.", object: true},
	{reflect.TypeFor[ComputeConfig](), "defaults"}:            {doc: "The operator's defaults, merged under each tenant's compute_config; null when there are none."},
	{reflect.TypeFor[Health](), "checks"}:                     {doc: "Each check by name: \"ok\" or \"failing\". The cause of a failure is logged, not shown."},
	{reflect.TypeFor[Problem](), "type"}:                      {doc: "A URI naming the kind of problem."},
	{reflect.TypeFor[Problem](), "code"}:                      {doc: "Stable across releases; clients branch on it."},
	{reflect.TypeFor[Problem](), "errors"}:                    {doc: "The fields at fault: every one, up to 100."},
	{reflect.TypeFor[Problem](), "errors_omitted"}:            {doc: "How many more fields are at fault than errors lists; absent when it lists them all."},
	{reflect.TypeFor[Problem](), "instance"}:                  {doc: "The request id (X-Request-ID), which finds the request in the server's log."},
	{reflect.TypeFor[Problem](), "error"}:                     {doc: "detail (title when there is no detail), then the first of errors and how many more there are, for clients that show only an error member."},
	{reflect.TypeFor[FieldError](), "pointer"}:                {doc: "The RFC 6901 JSON pointer of the field in the request body."},
	{reflect.TypeFor[FieldError](), "parameter"}:              {doc: "The query parameter or header at fault."},
	{reflect.TypeFor[ComputeStatus](), "generation"}:          {doc: "The generation the running workload was built from, when the provider records it."},
	{reflect.TypeFor[TenantPlan](), "version"}:                {doc: "The plan version the tenant runs."},
	{reflect.TypeFor[TenantPlan](), "pinned"}:                 {doc: "The tenant stays at version: rollouts leave it alone until it is unpinned."},
	{reflect.TypeFor[PlanChoice](), "version"}:                {doc: "A version of the plan, from 1; left out: the plan's current version for a tenant that starts to follow the plan, else the tenant's."},
	{reflect.TypeFor[PlanChoice](), "pinned"}:                 {doc: "Keep the tenant at this version: rollouts leave it alone."},
	{reflect.TypeFor[MaintenanceWindow](), "days"}:            {doc: "mon, tue, wed, thu, fri, sat, sun; empty or left out is every day."},
	{reflect.TypeFor[MaintenanceWindow](), "start"}:           {doc: "When the window opens, HH:MM (24-hour)."},
	{reflect.TypeFor[MaintenanceWindow](), "end"}:             {doc: "When it closes, HH:MM; at or before start closes the next day."},
	{reflect.TypeFor[MaintenanceWindow](), "time_zone"}:       {doc: "An IANA time zone name such as Europe/Berlin; UTC when left out. Local (the zone of each landlord process) is refused."},
	{reflect.TypeFor[ConfigLayers](), "defaults"}:             {doc: "The operator's defaults for the provider; null when there are none."},
	{reflect.TypeFor[ConfigLayers](), "plan"}:                 {doc: "The plan version's config; null for a tenant that follows no plan."},
	{reflect.TypeFor[ConfigLayers](), "tenant"}:               {doc: "The tenant's own compute_config (its overrides, for a tenant that follows a plan)."},
	{reflect.TypeFor[Plan](), "name"}:                         {doc: "A lowercase DNS label, unique among plans."},
	{reflect.TypeFor[Plan](), "provider"}:                     {doc: "The compute provider the plan's versions are for; a tenant on another provider cannot follow the plan. It never changes."},
	{reflect.TypeFor[Plan](), "latest_version"}:               {doc: "The newest version; 0 before the first is published."},
	{reflect.TypeFor[Plan](), "current_version"}:              {doc: "The version a tenant that starts to follow the plan gets: the first version, then the target of each rollout that completes."},
	{reflect.TypeFor[CreatePlanRequest](), "name"}:            {doc: "A lowercase DNS label (1 to 63 of a-z, 0-9 and -, starting and ending with a letter or digit), unique among plans."},
	{reflect.TypeFor[CreatePlanRequest](), "provider"}:        {doc: "An enabled compute provider; the server's default provider when left out."},
	{reflect.TypeFor[CreatePlanRequest](), "description"}:     {doc: "At most 1,024 bytes."},
	{reflect.TypeFor[PlanVersion](), "config"}:                {doc: "The fragment of compute_config the version sets.", object: true},
	{reflect.TypeFor[PublishVersionRequest](), "config"}:      {doc: "The fragment of compute_config the version sets: fields of the plan provider's schema with valid values; no secrets (writeOnly fields) and no compute_provider.", object: true},
	{reflect.TypeFor[PublishVersionRequest](), "message"}:     {doc: "What changed, at most 1,024 bytes."},
	{reflect.TypeFor[WaveSpec](), "name"}:                     {doc: "Unique among the waves; wave-N (its position, from 1) when left out. rest names the wave of the tenants no wave takes: a wave so named must be the last, without selector, count or percent."},
	{reflect.TypeFor[WaveSpec](), "selector"}:                 {doc: "Labels a tenant must all have; left out: every tenant."},
	{reflect.TypeFor[WaveSpec](), "count"}:                    {doc: "At most this many tenants, from 1; left out: no limit (0 is refused). Not with percent."},
	{reflect.TypeFor[WaveSpec](), "percent"}:                  {doc: "At most this percentage of the rollout's tenants, rounded up, 1 to 100; left out: no limit (0 is refused). Not with count."},
	{reflect.TypeFor[WaveSpec](), "max_in_flight"}:            {doc: "How many of the wave's tenants may be changing at once, from 1; left out: all of them (0 is refused)."},
	{reflect.TypeFor[CreateRolloutRequest](), "plan"}:         {doc: "The plan whose tenants move."},
	{reflect.TypeFor[CreateRolloutRequest](), "from_version"}: {doc: "Only tenants on this version, from 1; left out: every tenant of the plan on another version than to_version (0 is refused)."},
	{reflect.TypeFor[CreateRolloutRequest](), "to_version"}:   {doc: "The version the tenants move to, from 1; the plan's latest when left out (0 is refused)."},
	{reflect.TypeFor[CreateRolloutRequest](), "waves"}:        {doc: "The waves, in order, at most 100; tenants no wave takes form a last wave, rest (unless the last wave is so named). Left out: one wave of every tenant."},
	{reflect.TypeFor[CreateRolloutRequest](), "bake"}:         {doc: "How long every tenant of a wave must stay ready before the next wave starts: a Go duration such as 10m or 1h30m; 0 when left out."},
	{reflect.TypeFor[CreateRolloutRequest](), "max_failures"}: {doc: "The failure budget: the rollout halts when more tenants than this have failed; 0 when left out."},
	{reflect.TypeFor[CreateRolloutRequest](), "deadline"}:     {doc: "How long a changed tenant has to become ready at its new generation before it counts as failed: a positive Go duration; 15m when left out."},
	{reflect.TypeFor[AbortRolloutRequest](), "rollback"}:      {doc: "Move the tenants the rollout changed back to their versions."},
	{reflect.TypeFor[Rollout](), "state"}:                     {doc: "running, paused, halted (the failure budget ran out) and aborting have not finished; aborted and completed have.", enum: rolloutStates()},
	{reflect.TypeFor[Rollout](), "from_version"}:              {doc: "The version the rollout was limited to, if it was."},
	{reflect.TypeFor[Rollout](), "wave"}:                      {doc: "The index of the wave in progress; the number of waves once every wave is done."},
	{reflect.TypeFor[Rollout](), "wave_name"}:                 {doc: "The name of the wave in progress; absent once every wave is done."},
	{reflect.TypeFor[Rollout](), "bake"}:                      {doc: "The bake time of each wave, as a Go duration."},
	{reflect.TypeFor[Rollout](), "deadline"}:                  {doc: "Each changed tenant's deadline to become ready, as a Go duration."},
	{reflect.TypeFor[Rollout](), "counts"}:                    {doc: "The rollout's tenants by state: pending, changing, done, failed, skipped, rolled_back."},
	{reflect.TypeFor[Rollout](), "failed"}:                    {doc: "The names of the tenants that failed."},
	{reflect.TypeFor[Rollout](), "waiting"}:                   {doc: "Pending tenants of the wave in progress, still following the plan, whose maintenance window is closed; not shown in lists."},
	{reflect.TypeFor[Rollout](), "bake_from"}:                 {doc: "When every tenant of the wave in progress settled: its bake started then."},
	{reflect.TypeFor[Rollout](), "rollback"}:                  {doc: "The abort asked for the changed tenants to be rolled back."},
	{reflect.TypeFor[Rollout](), "message"}:                   {doc: "Why the rollout is as it is: who paused it, which tenants failed."},
	{reflect.TypeFor[Rollout](), "version"}:                   {doc: "Counts every write; the ETag, for If-Match."},
	{reflect.TypeFor[RolloutWave](), "size"}:                  {doc: "How many tenants the wave took."},
	{reflect.TypeFor[RolloutWave](), "counts"}:                {doc: "The wave's tenants by state."},
	{reflect.TypeFor[WaitingTenant](), "opens_at"}:            {doc: "When the window next opens; absent when it cannot be known."},
	{reflect.TypeFor[RolloutMember](), "state"}:               {doc: "Where the tenant is in the rollout.", enum: memberStates()},
	{reflect.TypeFor[RolloutMember](), "from_version"}:        {doc: "The plan version the tenant ran when the rollout took it."},
	{reflect.TypeFor[RolloutMember](), "generation"}:          {doc: "The tenant's generation that carries the target version; absent until it is changed."},
	{reflect.TypeFor[RolloutEvent](), "seq"}:                  {doc: "The event's number in the rollout's history; pass it as after to read what follows."},
	{reflect.TypeFor[RolloutEvent](), "type"}:                 {doc: "What happened.", enum: rolloutEventTypes()},
	{reflect.TypeFor[RolloutEvent](), "actor"}:                {doc: "Who did it: a token's name, or the controller."},
	{reflect.TypeFor[FleetPlan](), "pinned"}:                  {doc: "Tenants pinned to a version: left alone."},
	{reflect.TypeFor[FleetPlan](), "current"}:                 {doc: "Tenants already at the target version (or, with from_version, on another version): left alone."},
	{reflect.TypeFor[FleetPlan](), "diffs"}:                   {doc: "How the tenants' effective configs would change: each different set of changes once, in the order of the waves' tenants."},
	{reflect.TypeFor[FleetPlanTenant](), "diff"}:              {doc: "The id of the tenant's changes in diffs; absent when its effective config does not change."},
	{reflect.TypeFor[FleetPlanDiff](), "id"}:                  {doc: "What a tenant's diff refers to: d1, d2, …"},
	{reflect.TypeFor[FleetPlanDiff](), "tenants"}:             {doc: "How many tenants' configs change so."},
	{reflect.TypeFor[FleetPlanDiff](), "changes"}:             {doc: "The changes, secrets named only; empty when the fleet plan's diffs listed 1 MiB of changes before this one."},
	{reflect.TypeFor[FleetPlanDiff](), "changes_omitted"}:     {doc: "How many more changes there are than changes lists; absent when it lists them all."},
	{reflect.TypeFor[FleetPlanTenant](), "action"}:            {doc: "What the provider would do to the workload.", enum: []string{wire.ActionNone, wire.ActionInPlace, wire.ActionReplace}},
	{reflect.TypeFor[FleetPlanTenant](), "window_open"}:       {doc: "Whether the tenant's maintenance window is open now (always, without one); a rollout changes it only while it is."},
	{reflect.TypeFor[FleetPlanTenant](), "window_opens_at"}:   {doc: "When its window next opens, when it is closed now."},
	{reflect.TypeFor[FleetPlanCounts](), "waves"}:             {doc: "The tenants of each wave, by name."},
	{reflect.TypeFor[FleetPlanCounts](), "tenants"}:           {doc: "The tenants the rollout would change."},
	{reflect.TypeFor[FleetPlanCounts](), "out_of_window"}:     {doc: "Tenants whose maintenance window is closed now."},
	{reflect.TypeFor[FleetPlanCounts](), "actions"}:           {doc: "The tenants by the provider's action."},
	{reflect.TypeFor[PlanTenant](), "version"}:                {doc: "The plan version the tenant runs."},
	{reflect.TypeFor[wire.Endpoint](), "address"}:             {doc: "host:port where the port answers; a provider that runs nothing (mock) reports a URL whose scheme says so, such as mock://acme/app:80"},
}

// schemaGenerator makes the component schemas of the wire types.
type schemaGenerator struct {
	gen       *openapi3gen.Generator
	schemas   openapi3.Schemas
	used      map[fieldKey]bool
	usedTypes map[reflect.Type]bool
}

func newSchemaGenerator() *schemaGenerator {
	g := &schemaGenerator{schemas: openapi3.Schemas{}, used: map[fieldKey]bool{}, usedTypes: map[reflect.Type]bool{}}
	g.gen = openapi3gen.NewGenerator(
		openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true, ExportTopLevelSchema: true}),
		openapi3gen.SchemaCustomizer(g.customize),
	)
	return g
}

// ref returns a reference to the component schema of v's type, generating
// it and the schemas it refers to on first use.
func (g *schemaGenerator) ref(v any) (*openapi3.SchemaRef, error) {
	ref, err := g.gen.NewSchemaRefForValue(v, g.schemas)
	if err != nil {
		return nil, fmt.Errorf("schema of %T: %w", v, err)
	}
	if ref.Ref == "" {
		return nil, fmt.Errorf("schema of %T: a body must be a struct", v)
	}
	return openapi3.NewSchemaRef(ref.Ref, nil), nil
}

// customize makes openapi3gen's schemas say what the JSON encoding does,
// in OpenAPI 3.1 terms, and adds the notes.
func (g *schemaGenerator) customize(_ string, t reflect.Type, tag reflect.StructTag, s *openapi3.Schema) error {
	// openapi3gen marks a pointer "nullable", which OpenAPI 3.1 dropped for
	// a "null" type. A nil pointer with omitempty is left out, never null.
	if s.Nullable {
		s.Nullable = false
		if !omitted(tag) && s.Type != nil {
			s.Type.With(openapi3.TypeNull)
		}
	}
	if t.Kind() != reflect.Struct || s.Properties == nil {
		return nil
	}
	doc, ok := typeNotes[t]
	if !ok {
		return fmt.Errorf("%s: typeNotes does not describe this body type", t)
	}
	s.Description = doc
	g.usedTypes[t] = true
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		// Fields without omitempty are always sent, so always present.
		if !omitted(f.Tag) {
			s.Required = append(s.Required, name)
		}
		key := fieldKey{t, name}
		note, ok := fieldNotes[key]
		if !ok {
			continue
		}
		g.used[key] = true
		prop := s.Properties[name]
		if prop == nil || prop.Value == nil || strings.HasPrefix(prop.Ref, "#/") {
			return fmt.Errorf("%s.%s: a note on a field without an inline schema", t, name)
		}
		p := prop.Value
		p.Description = note.doc
		for _, e := range note.enum {
			p.Enum = append(p.Enum, e)
		}
		if note.object {
			p.Type = &openapi3.Types{openapi3.TypeObject}
		}
	}
	return nil
}

// unused returns an error naming the notes on types and fields that no
// generated schema has.
func (g *schemaGenerator) unused() error {
	var stale []string
	for k := range fieldNotes {
		if !g.used[k] {
			stale = append(stale, k.t.String()+"."+k.name)
		}
	}
	for t := range typeNotes {
		if !g.usedTypes[t] {
			stale = append(stale, t.String())
		}
	}
	slices.Sort(stale)
	if len(stale) > 0 {
		return fmt.Errorf("notes on types or fields that no body has: %s", strings.Join(stale, ", "))
	}
	return nil
}

func omitted(tag reflect.StructTag) bool {
	_, opts, _ := strings.Cut(tag.Get("json"), ",")
	for o := range strings.SplitSeq(opts, ",") {
		if o == "omitempty" || o == "omitzero" {
			return true
		}
	}
	return false
}

// closed refuses unknown members in the request body schema ref points to,
// as the handlers do.
func (g *schemaGenerator) closed(ref *openapi3.SchemaRef) {
	no := false
	g.component(ref).AdditionalProperties = openapi3.AdditionalProperties{Has: &no}
}

func (g *schemaGenerator) component(ref *openapi3.SchemaRef) *openapi3.Schema {
	return g.schemas[strings.TrimPrefix(ref.Ref, "#/components/schemas/")].Value
}

// mergePatch returns a reference to the schema of an RFC 7396 merge patch of
// the body ref points to: every member optional, and null (which removes a
// member) allowed for those the body may leave out.
func (g *schemaGenerator) mergePatch(ref *openapi3.SchemaRef) *openapi3.SchemaRef {
	name := strings.TrimPrefix(ref.Ref, "#/components/schemas/") + "MergePatch"
	if _, ok := g.schemas[name]; !ok {
		body := g.component(ref)
		patch := &openapi3.Schema{
			Type:                 &openapi3.Types{openapi3.TypeObject},
			Description:          "An RFC 7396 JSON merge patch of " + strings.TrimPrefix(ref.Ref, "#/components/schemas/") + ": a member sent replaces the stored one (objects merge member by member), null removes it, a member left out is kept.",
			Properties:           openapi3.Schemas{},
			AdditionalProperties: body.AdditionalProperties,
		}
		for pname, p := range body.Properties {
			optional := !slices.Contains(body.Required, pname)
			switch {
			case p.Ref != "" && optional:
				patch.Properties[pname] = openapi3.NewSchemaRef("", &openapi3.Schema{AnyOf: openapi3.SchemaRefs{p, {Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeNull}}}}})
			case p.Ref != "" || !optional || p.Value.Type == nil:
				patch.Properties[pname] = p
			default:
				q := *p.Value
				types := p.Value.Type.Clone()
				types.With(openapi3.TypeNull)
				q.Type = &types
				patch.Properties[pname] = openapi3.NewSchemaRef("", &q)
			}
		}
		g.schemas[name] = openapi3.NewSchemaRef("", patch)
	}
	return openapi3.NewSchemaRef("#/components/schemas/"+name, nil)
}

const capabilitiesDoc = "What the provider supports, by capability: in_place_update, multiple_containers, secrets, published_ports, " +
	"public_networking, health_checks, scaling, volumes. A config asking for what it does not support is a 422 naming the field and the capability. " +
	"Absent when the provider declares nothing."
