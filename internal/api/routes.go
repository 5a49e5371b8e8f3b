package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// route is one operation of the API. The table of routes is served as is and
// described as is in the OpenAPI document.
type route struct {
	method  string
	pattern string
	// operation is the OpenAPI operationId.
	operation string
	summary   string
	// access is who may call it.
	access access
	// request and response are the body types, for the OpenAPI document;
	// nil when there is none.
	request, response any
	// status is the success status.
	status int
	// bodyOptional says the request body may be left out.
	bodyOptional bool
	// query are the query parameters the operation reads (queryNames),
	// found once, when the routes are grouped.
	query  []string
	handle func(w http.ResponseWriter, r *http.Request) error
}

type access int

const (
	open  access = iota // no token needed
	read                // any token
	write               // an admin token
)

// routes is the API.
func (s *Server) routes() []route {
	return []route{
		{method: "GET", pattern: "/healthz", operation: "healthz", summary: "The process is up", access: open, response: wire.Health{}, status: 200, handle: s.healthz},
		{method: "GET", pattern: "/readyz", operation: "readyz", summary: "The database answers, providers are healthy, the controller has a leader", access: open, response: wire.Health{}, status: 200, handle: s.readyz},
		{method: "GET", pattern: "/metrics", operation: "getMetrics", summary: "Prometheus metrics", access: read, response: metricsBody{}, status: 200, handle: s.metrics},
		{method: "GET", pattern: "/v1/whoami", operation: "whoami", summary: "Who the token is: its name and role", access: read, response: wire.Identity{}, status: 200, handle: s.whoami},
		{method: "GET", pattern: "/v1/compute/providers", operation: "listProviders", summary: "The enabled compute providers and their health", access: read, response: wire.ProviderList{}, status: 200, handle: s.listProviders},
		{method: "GET", pattern: "/v1/compute/config", operation: "getComputeConfig", summary: "A provider's compute_config schema and defaults", access: read, response: wire.ComputeConfig{}, status: 200, handle: s.getComputeConfig},
		{method: "POST", pattern: "/v1/tenants", operation: "createTenant", summary: "Create a tenant", access: write, request: wire.CreateTenantRequest{}, response: wire.Tenant{}, status: 201, handle: s.createTenant},
		{method: "GET", pattern: "/v1/tenants", operation: "listTenants", summary: "List tenants", access: read, response: wire.TenantList{}, status: 200, handle: s.listTenants},
		{method: "GET", pattern: "/v1/tenants/{tenant}", operation: "getTenant", summary: "Get a tenant by id or name", access: read, response: wire.Tenant{}, status: 200, handle: s.getTenant},
		{method: "PUT", pattern: "/v1/tenants/{tenant}", operation: "replaceTenant", summary: "Replace a tenant's desired state", access: write, request: wire.ReplaceTenantRequest{}, response: wire.Tenant{}, status: 200, handle: s.replaceTenant},
		{method: "PATCH", pattern: "/v1/tenants/{tenant}", operation: "patchTenant", summary: "Change a tenant's desired state with a JSON merge patch (RFC 7396)", access: write, request: wire.ReplaceTenantRequest{}, response: wire.Tenant{}, status: 200, handle: s.patchTenant},
		{method: "DELETE", pattern: "/v1/tenants/{tenant}", operation: "deleteTenant", summary: "Delete a tenant", access: write, response: wire.Tenant{}, status: 202, handle: s.deleteTenant},
		{method: "POST", pattern: "/v1/tenants/{tenant}/move", operation: "moveTenant", summary: "Move a tenant's placement to another provider, make-before-break", access: write, request: wire.MoveRequest{}, response: wire.Tenant{}, status: 202, handle: s.moveTenant},
		{method: "POST", pattern: "/v1/tenants/{tenant}/move/approve", operation: "approveMove", summary: "Let a move that holds for an approval switch", access: write, request: wire.MoveActionRequest{}, bodyOptional: true, response: wire.Tenant{}, status: 202, handle: s.approveMove},
		{method: "POST", pattern: "/v1/tenants/{tenant}/move/cancel", operation: "cancelMove", summary: "Cancel a move before it switches", access: write, request: wire.MoveActionRequest{}, bodyOptional: true, response: wire.Tenant{}, status: 202, handle: s.cancelMove},
		{method: "GET", pattern: "/v1/tenants/{tenant}/events", operation: "listTenantEvents", summary: "A tenant's history", access: read, response: wire.EventList{}, status: 200, handle: s.listEvents},
		{method: "GET", pattern: "/v1/tenants/{tenant}/status", operation: "getTenantStatus", summary: "A tenant's live workload status from its provider", access: read, response: wire.ComputeStatus{}, status: 200, handle: s.getStatus},
		{method: "POST", pattern: "/v1/plans", operation: "createPlan", summary: "Create a plan", access: write, request: wire.CreatePlanRequest{}, response: wire.Plan{}, status: 201, handle: s.createPlan},
		{method: "GET", pattern: "/v1/plans", operation: "listPlans", summary: "List plans", access: read, response: wire.PlanList{}, status: 200, handle: s.listPlans},
		{method: "GET", pattern: "/v1/plans/{plan}", operation: "getPlan", summary: "Get a plan", access: read, response: wire.Plan{}, status: 200, handle: s.getPlanRoute},
		{method: "DELETE", pattern: "/v1/plans/{plan}", operation: "deletePlan", summary: "Delete a plan and its versions", access: write, status: 204, handle: s.deletePlan},
		{method: "POST", pattern: "/v1/plans/{plan}/versions", operation: "publishPlanVersion", summary: "Publish a plan's next version", access: write, request: wire.PublishVersionRequest{}, response: wire.PlanVersion{}, status: 201, handle: s.publishVersion},
		{method: "GET", pattern: "/v1/plans/{plan}/versions", operation: "listPlanVersions", summary: "List a plan's versions", access: read, response: wire.PlanVersionList{}, status: 200, handle: s.listVersions},
		{method: "GET", pattern: "/v1/plans/{plan}/versions/{version}", operation: "getPlanVersion", summary: "Get one version of a plan", access: read, response: wire.PlanVersion{}, status: 200, handle: s.getVersionRoute},
		{method: "POST", pattern: "/v1/rollouts", operation: "createRollout", summary: "Start a rollout of a plan's version, or plan one (dry_run)", access: write, request: wire.CreateRolloutRequest{}, response: wire.Rollout{}, status: 201, handle: s.createRollout},
		{method: "GET", pattern: "/v1/rollouts", operation: "listRollouts", summary: "List rollouts, newest first", access: read, response: wire.RolloutList{}, status: 200, handle: s.listRollouts},
		{method: "GET", pattern: "/v1/rollouts/{rollout}", operation: "getRollout", summary: "Get a rollout and where it stands", access: read, response: wire.Rollout{}, status: 200, handle: s.getRolloutRoute},
		{method: "GET", pattern: "/v1/rollouts/{rollout}/members", operation: "listRolloutMembers", summary: "A rollout's tenants and their states", access: read, response: wire.RolloutMemberList{}, status: 200, handle: s.listMembers},
		{method: "GET", pattern: "/v1/rollouts/{rollout}/events", operation: "listRolloutEvents", summary: "A rollout's history", access: read, response: wire.RolloutEventList{}, status: 200, handle: s.listRolloutEvents},
		{method: "POST", pattern: "/v1/rollouts/{rollout}/pause", operation: "pauseRollout", summary: "Pause a running rollout", access: write, response: wire.Rollout{}, status: 200, handle: s.pauseRollout},
		{method: "POST", pattern: "/v1/rollouts/{rollout}/resume", operation: "resumeRollout", summary: "Resume a paused or halted rollout", access: write, response: wire.Rollout{}, status: 200, handle: s.resumeRollout},
		{method: "POST", pattern: "/v1/rollouts/{rollout}/abort", operation: "abortRollout", summary: "Abort a rollout, optionally rolling its changed tenants back", access: write, request: wire.AbortRolloutRequest{}, bodyOptional: true, response: wire.Rollout{}, status: 200, handle: s.abortRollout},
		{method: "GET", pattern: "/v1/events", operation: "listEvents", summary: "The event feed: CloudEvents after a sequence, oldest first", access: read, response: wire.EventFeed{}, status: 200, handle: s.listFeed},
		{method: "GET", pattern: "/v1/events/stream", operation: "streamEvents", summary: "The event feed as server-sent events", access: read, response: eventStreamBody{}, status: 200, handle: s.streamFeed},
		{method: "POST", pattern: "/v1/subscriptions", operation: "createSubscription", summary: "Subscribe a webhook to events", access: write, request: wire.CreateSubscriptionRequest{}, response: wire.Subscription{}, status: 201, handle: s.createSubscription},
		{method: "GET", pattern: "/v1/subscriptions", operation: "listSubscriptions", summary: "List webhook subscriptions", access: read, response: wire.SubscriptionList{}, status: 200, handle: s.listSubscriptions},
		{method: "GET", pattern: "/v1/subscriptions/{subscription}", operation: "getSubscription", summary: "Get a webhook subscription", access: read, response: wire.Subscription{}, status: 200, handle: s.getSubscription},
		{method: "PATCH", pattern: "/v1/subscriptions/{subscription}", operation: "updateSubscription", summary: "Change a webhook subscription: its URL, filters, description, or enable it again", access: write, request: wire.UpdateSubscriptionRequest{}, response: wire.Subscription{}, status: 200, handle: s.updateSubscription},
		{method: "DELETE", pattern: "/v1/subscriptions/{subscription}", operation: "deleteSubscription", summary: "Delete a webhook subscription and its delivery log", access: write, status: 204, handle: s.deleteSubscription},
		{method: "POST", pattern: "/v1/subscriptions/{subscription}/secrets", operation: "rotateSubscriptionSecret", summary: "Rotate a subscription's signing secret; the previous one keeps signing for a while", access: write, request: wire.RotateSecretRequest{}, response: wire.Subscription{}, status: 200, handle: s.rotateSecret},
		{method: "GET", pattern: "/v1/subscriptions/{subscription}/deliveries", operation: "listDeliveries", summary: "A subscription's delivery log, newest first", access: read, response: wire.DeliveryList{}, status: 200, handle: s.listDeliveries},
		{method: "GET", pattern: "/v1/subscriptions/{subscription}/deliveries/{event}", operation: "getDelivery", summary: "One delivery and its attempts", access: read, response: wire.Delivery{}, status: 200, handle: s.getDelivery},
		{method: "POST", pattern: "/v1/subscriptions/{subscription}/redeliver", operation: "redeliver", summary: "Send one event, or the events of a time range, again", access: write, request: wire.RedeliverRequest{}, response: wire.RedeliverResponse{}, status: 202, handle: s.redeliver},
		{method: "GET", pattern: "/v1/openapi.json", operation: "getOpenAPI", summary: "This API's OpenAPI 3.1 document", access: open, response: openAPIDocument{}, status: 200, handle: s.openAPI},
		{method: "GET", pattern: "/docs", operation: "getDocs", summary: "This API's reference, rendered from the OpenAPI document for people", access: open, response: docsPageBody{}, status: 200, handle: s.docs},
		{method: "GET", pattern: "/docs/{asset}", operation: "getDocsAsset", summary: "A script or style sheet of the reference page", access: open, response: docsAssetBody{}, status: 200, handle: s.docsAsset},
	}
}

// groupRoutes groups routes by path pattern: one handler per path answers
// every method, so that a wrong method gets a JSON 405.
func groupRoutes(rs []route) map[string][]route {
	out := map[string][]route{}
	for _, r := range rs {
		r.query = queryNames(r.operation)
		out[r.pattern] = append(out[r.pattern], r)
	}
	return out
}

// queryNames are the query parameters an operation reads: those its notes
// give, which the OpenAPI document lists too.
func queryNames(operation string) []string {
	var out []string
	for _, p := range operationNotes[operation].params {
		if p.In == openapi3.ParameterInQuery {
			out = append(out, p.Name)
		}
	}
	return out
}

// dispatch serves the routes of one path: method, then access, then the
// handler.
func (s *Server) dispatch(rs []route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := slices.IndexFunc(rs, func(rt route) bool {
			return rt.method == r.Method || (r.Method == http.MethodHead && rt.method == http.MethodGet)
		})
		if i < 0 {
			var allow []string
			for _, rt := range rs {
				allow = append(allow, rt.method)
				if rt.method == http.MethodGet {
					allow = append(allow, http.MethodHead)
				}
			}
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.writeProblem(w, r, problem(http.StatusMethodNotAllowed, wire.CodeMethodNotAllowed, r.Method+" is not allowed here; use "+strings.Join(allow, " or ")))
			return
		}
		rt := rs[i]
		if rt.access != open {
			who, ok := s.signIn(w, r)
			if !ok {
				return
			}
			if rt.access == write && who.Role != RoleAdmin {
				s.writeProblem(w, r, problem(http.StatusForbidden, wire.CodeForbidden, credential(who)+" may only read"))
				return
			}
		}
		if err := checkParameters(r, rt); err != nil {
			s.writeProblem(w, r, err)
			return
		}
		if err := rt.handle(w, r); err != nil {
			s.writeProblem(w, r, err)
		}
	})
}
