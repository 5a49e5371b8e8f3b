package openapi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

const (
	securityScheme    = "bearerAuth"
	certificateScheme = "clientCertificate"
	requestIDRef      = "#/components/parameters/RequestID"
	problemRef        = "#/components/schemas/Problem"
	contentJSON       = "application/json"
	contentMergePatch = "application/merge-patch+json"
	contentProblem    = "application/problem+json"
)

// tags group the operations, by the start of their paths.
var tags = []struct {
	name, description string
	paths             []string
}{
	{"tenants", "Tenants: their desired state, their history and their live status.", []string{"/v1/tenants"}},
	{"plans", "Plans: named, versioned fragments of compute_config that tenants follow; a published version never changes.", []string{"/v1/plans"}},
	{"rollouts", "Rollouts: moving a plan's tenants to another version in waves, gated on their health, with a fleet plan first (dry_run).", []string{"/v1/rollouts"}},
	{"events", "Events: the feed of CloudEvents landlord publishes (tenants created, changed, ready, failed, drifted, deleted; rollouts; plan versions), in commit order, and the webhook subscriptions that receive them, signed by the Standard Webhooks scheme.", []string{"/v1/events", "/v1/subscriptions"}},
	{"identity", "Who a token is.", []string{"/v1/whoami"}},
	{"compute", "The enabled compute providers and the compute_config each accepts.", []string{"/v1/compute"}},
	{"health", "Liveness, readiness and metrics, for load balancers, orchestrators and monitoring.", []string{"/healthz", "/readyz", "/metrics"}},
	{"docs", "This document and its rendering for people.", []string{"/v1/openapi.json", "/docs"}},
}

func tagFor(pattern string) (string, error) {
	for _, t := range tags {
		for _, p := range t.paths {
			if pattern == p || strings.HasPrefix(pattern, p+"/") {
				return t.name, nil
			}
		}
	}
	return "", fmt.Errorf("%s: no tag covers the path", pattern)
}

// JSON returns the document of ops as Build makes it, indented, with a
// final newline: the body of GET /v1/openapi.json.
func JSON(ops []Operation) ([]byte, error) {
	doc, err := Build(ops)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return append(b, '\n'), nil
}

// Build returns the document of ops, in their order.
func Build(ops []Operation) (*openapi3.T, error) {
	doc := newDocument()
	gen := newSchemaGenerator()
	// Every problem response refers to Problem.
	if _, err := gen.ref(problemBody); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	seen := map[string]bool{}
	for _, o := range ops {
		if seen[o.ID] {
			return nil, fmt.Errorf("openapi: operation %s is declared twice", o.ID)
		}
		seen[o.ID] = true
		op, err := operation(gen, o)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s %s: %w", o.Method, o.Pattern, err)
		}
		item := doc.Paths.Value(o.Pattern)
		if item == nil {
			item = &openapi3.PathItem{}
			doc.Paths.Set(o.Pattern, item)
		}
		if item.GetOperation(o.Method) != nil {
			return nil, fmt.Errorf("openapi: %s %s is declared twice", o.Method, o.Pattern)
		}
		item.SetOperation(o.Method, op)
	}
	if err := gen.unused(); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	doc.Components.Schemas = gen.schemas
	return doc, nil
}

// newDocument is the document without operations or schemas: what it says
// of landlord, its security schemes, the request id and the tags.
func newDocument() *openapi3.T {
	doc := &openapi3.T{
		OpenAPI: "3.1.0",
		Info: &openapi3.Info{
			Title:   "landlord",
			Version: "1",
			Description: "landlord provisions and keeps a dedicated deployment per tenant on a compute platform. " +
				"Every error is an RFC 9457 problem (application/problem+json) with a stable code and, for invalid input, every field at fault with its JSON pointer. " +
				"An unknown path is a 404 problem and a method a path does not serve a 405 problem with an Allow header. " +
				"A query parameter an operation does not read is a 400 invalid_parameter problem naming it. " +
				"Every response carries X-Request-ID: the client's, when it sends a sane one, or a new one.",
		},
		// Either scheme: a bearer token, or a client certificate.
		Security: openapi3.SecurityRequirements{{securityScheme: {}}, {certificateScheme: {}}},
		Paths:    openapi3.NewPaths(),
		Components: &openapi3.Components{
			SecuritySchemes: openapi3.SecuritySchemes{
				securityScheme: {Value: &openapi3.SecurityScheme{
					Type:   "http",
					Scheme: "bearer",
					Description: "A token from the server's configuration (tokens), or a JWT from the identity provider it trusts (oidc): " +
						"its issuer, audience and expiry are checked and its groups claim maps it to a role. " +
						"An admin may read and write, a reader may only read. " +
						"A server configured without credentials serves loopback only and needs none.",
				}},
				certificateScheme: {Value: &openapi3.SecurityScheme{
					Type: "mutualTLS",
					Description: "A client certificate, verified against the server's tls.client_ca_file, " +
						"whose subject common name or SAN tls.client_roles maps to a name and a role.",
				}},
			},
			Parameters: openapi3.ParametersMap{"RequestID": {Value: &openapi3.Parameter{
				Name: "X-Request-ID", In: openapi3.ParameterInHeader,
				Description: "Names the request in the server's log and in problems; 1 to 128 printable ASCII characters. A new one is made when it is absent or not sane.",
				Schema:      openapi3.NewStringSchema().NewRef(),
			}}},
			Headers: openapi3.Headers{"X-Request-ID": {Value: &openapi3.Header{Parameter: openapi3.Parameter{
				Description: "The request's id: the client's X-Request-ID, or a new one.",
				Schema:      openapi3.NewStringSchema().NewRef(),
			}}}},
		},
	}
	for _, t := range tags {
		doc.Tags = append(doc.Tags, &openapi3.Tag{Name: t.name, Description: t.description})
	}
	return doc
}
