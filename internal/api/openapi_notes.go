package api

import (
	"fmt"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// operationNote is what the route table cannot say about an operation.
type operationNote struct {
	description string
	// params are the query parameters and headers the handler reads.
	params []parameter
	// success says more of the success response.
	success string
	// headers are sent with the success response, beyond X-Request-ID,
	// ETag (with a Tenant) and Location (with a 201).
	headers openapi3.Headers
	// also are other responses that are not problems.
	also []otherResponse
	// problems are the problem codes the handler may answer, by status,
	// beyond those of its access, parameters and body.
	problems map[int][]string
}

type otherResponse struct {
	status      int
	description string
	body        any
}

// parameter is a parameter a handler reads, with the problems a bad value
// gets.
type parameter struct {
	param    *openapi3.Parameter
	problems map[int][]string
}

var badParameter = map[int][]string{http.StatusBadRequest: {CodeInvalidParameter}}

func queryParam(name, doc string, schema *openapi3.Schema) *openapi3.Parameter {
	return &openapi3.Parameter{Name: name, In: openapi3.ParameterInQuery, Description: doc, Schema: schema.NewRef()}
}

func headerParam(name, doc string) *openapi3.Parameter {
	return &openapi3.Parameter{Name: name, In: openapi3.ParameterInHeader, Description: doc, Schema: openapi3.NewStringSchema().NewRef()}
}

// repeated is a query parameter that may be given several times.
func repeated(p *openapi3.Parameter) *openapi3.Parameter {
	explode := true
	p.Style, p.Explode = openapi3.SerializationForm, &explode
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
	pageSizeParam   = parameter{queryParam("page_size", "How many to return at most.", pageSizeSchema()), badParameter}
	pageTokenParam  = parameter{queryParam("page_token", "The next_page_token of the previous page.", openapi3.NewStringSchema()), badParameter}
	eventOrderParam = parameter{queryParam("order", "oldest lists the history oldest first, newest newest first. "+
		"A page token continues the order it was returned by; given to the other order it is a 400.", eventOrderSchema()), badParameter}

	dryRunParam = parameter{queryParam("dry_run", "Validate, and answer 200 with the tenant as it would be stored (provider chosen, defaults merged into effective_config); store nothing.",
		openapi3.NewBoolSchema()), badParameter}
	includeDeletedParam = parameter{queryParam("include_deleted", "Find a deleted tenant too; without it, a deleted tenant is a 404.",
		openapi3.NewBoolSchema()), badParameter}
	listDeletedParam = parameter{queryParam("include_deleted", "List deleted tenants too.", openapi3.NewBoolSchema()), badParameter}
	forgetParam      = parameter{queryParam("forget", "Delete the record at once, destroying nothing, of a tenant whose provider is not enabled on this server "+
		"(it was switched to another): answered 200 with the tenant, deleted. The tenant's history records who forgot it and what may still run. "+
		"A tenant whose provider is enabled is a 409 provider_enabled: delete it without forget.", openapi3.NewBoolSchema()),
		map[int][]string{http.StatusBadRequest: {CodeInvalidParameter}, http.StatusConflict: {CodeProviderEnabled}}}
	statusParam = parameter{repeated(queryParam("status", "Only tenants in one of these statuses. Repeat the parameter, or separate statuses with commas.",
		statusesSchema())), badParameter}
	labelParam = parameter{repeated(queryParam("label", "Only tenants with this label, as key=value. Repeat the parameter to require several.",
		openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()))), badParameter}
	providerFilterParam = parameter{param: queryParam("provider", "Only tenants of this compute provider.", openapi3.NewStringSchema())}
	namePrefixParam     = parameter{param: queryParam("name_prefix", "Only tenants whose name starts with this.", openapi3.NewStringSchema())}

	providerParam = parameter{queryParam("provider", "The provider to describe; the default provider when absent.", openapi3.NewStringSchema()),
		map[int][]string{http.StatusUnprocessableEntity: {CodeProviderNotFound}}}

	idempotencyKeyParam = parameter{headerParam("Idempotency-Key", "Makes a retry safe: a request with the key of an earlier one (by the same token, within 24 hours) "+
		"and the same body gets the earlier response again, with Idempotent-Replayed: true; with another body it is a 422. "+
		"While the earlier one is in progress it is a 409 idempotency_in_progress with Retry-After. "+
		"The tenant and the response kept for the key are stored in one transaction; a request that fails keeps nothing, and frees the key. "+
		"1 to 255 printable ASCII characters."),
		map[int][]string{http.StatusBadRequest: {CodeInvalidParameter}, http.StatusConflict: {CodeIdempotencyPending},
			http.StatusUnprocessableEntity: {CodeIdempotencyMismatch}}}

	ifMatchParam = parameter{headerParam("If-Match", "Change the tenant only if its version is still this ETag (from an ETag header), else answer 412. "+
		"Without it (or with *), a concurrent change is retried on the new state, or answered 409."),
		map[int][]string{http.StatusBadRequest: {CodeInvalidParameter}, http.StatusPreconditionFailed: {CodePreconditionFailed}}}
)

// pathParameter describes a path parameter by its name.
func pathParameter(name string) (parameter, error) {
	p := &openapi3.Parameter{Name: name, In: openapi3.ParameterInPath, Required: true}
	switch name {
	case "tenant":
		p.Description = "The tenant's id or name."
		p.Schema = openapi3.NewStringSchema().NewRef()
		return parameter{p, map[int][]string{http.StatusNotFound: {CodeTenantNotFound}}}, nil
	case "asset":
		s := openapi3.NewStringSchema()
		for _, a := range docsAssetNames() {
			s.Enum = append(s.Enum, a)
		}
		p.Description = "A file of the page, as the page names it."
		p.Schema = s.NewRef()
		return parameter{p, map[int][]string{http.StatusNotFound: {CodeNotFound}}}, nil
	}
	return parameter{}, fmt.Errorf("path parameter {%s}: pathParameter does not describe it", name)
}

var (
	etagHeader = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Description: "The tenant's version, for If-Match.", Schema: openapi3.NewStringSchema().NewRef(),
	}}}
	locationHeader = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Description: "The new tenant's path.", Schema: openapi3.NewStringSchema().NewRef(),
	}}}
	replayedHeader = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Description: "true when this is the earlier response to a request with the same Idempotency-Key.",
		Schema:      openapi3.NewStringSchema().NewRef(),
	}}}
)

// changeProblems are the problems of a change to a tenant's desired state.
var changeProblems = map[int][]string{
	http.StatusConflict:            {CodeTenantDeleting, CodeVersionConflict},
	http.StatusUnprocessableEntity: {CodeInvalidComputeConfig, CodeProviderNotFound},
	http.StatusServiceUnavailable:  {CodeStorageUnavailable},
}

// operationNotes are keyed by operation.
var operationNotes = map[string]operationNote{
	"readyz": {
		also: []otherResponse{{http.StatusServiceUnavailable, "a check failed; checks names it", Health{}}},
	},
	"getComputeConfig": {params: []parameter{providerParam}},
	"getMetrics": {
		description: "The Prometheus text format: HTTP requests by route and code and their latency, tenants by status, reconciles and their duration, the controller's queue depth, provider operations by outcome, and the Go runtime.",
		problems:    map[int][]string{http.StatusNotFound: {CodeNotFound}},
	},
	"createTenant": {
		description: "The tenant is validated in full (name rules, the provider's JSON Schema and rules, on the config merged with the operator's defaults) before anything is stored; the controller then provisions it.",
		params:      []parameter{dryRunParam, idempotencyKeyParam},
		success:     "the tenant, as stored",
		headers:     openapi3.Headers{"Idempotent-Replayed": replayedHeader},
		also:        []otherResponse{{http.StatusOK, "dry_run=true: the tenant as it would be stored, with effective_config; nothing is stored", Tenant{}}},
		problems: map[int][]string{
			http.StatusBadRequest:          {CodeInvalidName},
			http.StatusConflict:            {CodeNameTaken},
			http.StatusUnprocessableEntity: {CodeInvalidComputeConfig, CodeProviderNotFound},
			http.StatusServiceUnavailable:  {CodeStorageUnavailable},
		},
	},
	"listTenants": {
		description: "Deleted tenants are listed only with include_deleted=true, or when status names deleted.",
		params:      []parameter{statusParam, providerFilterParam, labelParam, namePrefixParam, listDeletedParam, pageSizeParam, pageTokenParam},
	},
	"getTenant": {params: []parameter{includeDeletedParam}},
	"replaceTenant": {
		description: "labels and annotations left out (or null) are kept; {} removes them all. A change that alters nothing answers 200 without bumping generation.",
		problems:    changeProblems,
	},
	"patchTenant": {
		description: "A change that alters nothing answers 200 without bumping generation.",
		problems:    changeProblems,
	},
	"deleteTenant": {
		description: "The controller destroys the tenant's workload; the tenant keeps its record and history. Repeating the request is harmless.",
		params:      []parameter{forgetParam},
		success:     "deletion is under way; the tenant as it is now",
		also:        []otherResponse{{http.StatusOK, "forget=true: the tenant, deleted", Tenant{}}},
		problems:    map[int][]string{http.StatusConflict: {CodeVersionConflict}, http.StatusServiceUnavailable: {CodeStorageUnavailable}},
	},
	"listTenantEvents": {
		description: "Oldest first, or newest first with order=newest; a deleted tenant's history too.",
		params:      []parameter{eventOrderParam, pageSizeParam, pageTokenParam},
	},
	"getTenantStatus": {
		description: "Asks the provider now; nothing is cached.",
		problems: map[int][]string{
			http.StatusNotFound:            {CodeWorkloadNotFound},
			http.StatusBadGateway:          {CodeUnavailable},
			http.StatusUnprocessableEntity: {CodeProviderNotFound},
		},
	},
}
