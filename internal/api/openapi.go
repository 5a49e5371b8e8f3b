package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// The OpenAPI document is generated from the route table and the wire types
// the handlers read and write, so that it describes what is served. What
// neither can tell (the parameters a handler reads, the problems it answers
// beyond those every route of its kind has) is in operationNotes; building
// the document fails when a note names no route or a route has a path
// parameter nothing describes.

var openAPIOnce struct {
	sync.Once
	doc []byte
	err error
}

// openAPIJSON returns the OpenAPI document, built on first use. It does not
// depend on a server's options, so one document serves every server.
func openAPIJSON() ([]byte, error) {
	openAPIOnce.Do(func() {
		doc, err := newOpenAPI(new(Server).routes())
		if err != nil {
			openAPIOnce.err = fmt.Errorf("api: openapi document: %w", err)
			return
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			openAPIOnce.err = fmt.Errorf("api: openapi document: %w", err)
			return
		}
		openAPIOnce.doc = append(b, '\n')
	})
	return openAPIOnce.doc, openAPIOnce.err
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	doc, err := openAPIJSON()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", contentJSON)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(doc)
	return nil
}

// openAPIDocument is the body of GET /v1/openapi.json.
type openAPIDocument struct{}

func (openAPIDocument) openAPIContent() openapi3.Content {
	return openapi3.NewContentWithJSONSchema(&openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "An OpenAPI 3.1 document.",
		Required:    []string{"openapi", "info"},
	})
}

// contentDescriber is implemented by the body types that are not the JSON
// encoding of their Go type: they give their own media types and schemas.
type contentDescriber interface {
	openAPIContent() openapi3.Content
}

const (
	securityScheme    = "bearerAuth"
	certificateScheme = "clientCertificate"
	requestIDRef      = "#/components/parameters/RequestID"
	problemRef        = "#/components/schemas/Problem"
	contentProblem    = "application/problem+json"
)

// openAPITags group the operations, by the start of their paths.
var openAPITags = []struct {
	name, description string
	paths             []string
}{
	{"tenants", "Tenants: their desired state, their history and their live status.", []string{"/v1/tenants"}},
	{"plans", "Plans: named, versioned fragments of compute_config that tenants follow; a published version never changes.", []string{"/v1/plans"}},
	{"rollouts", "Rollouts: moving a plan's tenants to another version in waves, gated on their health, with a fleet plan first (dry_run).", []string{"/v1/rollouts"}},
	{"identity", "Who a token is.", []string{"/v1/whoami"}},
	{"compute", "The enabled compute providers and the compute_config each accepts.", []string{"/v1/compute"}},
	{"health", "Liveness, readiness and metrics, for load balancers, orchestrators and monitoring.", []string{"/healthz", "/readyz", "/metrics"}},
	{"docs", "This document and its rendering for people.", []string{"/v1/openapi.json", "/docs"}},
}

func tagFor(pattern string) (string, error) {
	for _, t := range openAPITags {
		for _, p := range t.paths {
			if pattern == p || strings.HasPrefix(pattern, p+"/") {
				return t.name, nil
			}
		}
	}
	return "", fmt.Errorf("%s: no tag in openAPITags covers the path", pattern)
}

var pathParam = regexp.MustCompile(`\{([^}]*)\}`)

// newOpenAPI describes routes.
func newOpenAPI(routes []route) (*openapi3.T, error) {
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
	for _, t := range openAPITags {
		doc.Tags = append(doc.Tags, &openapi3.Tag{Name: t.name, Description: t.description})
	}

	gen := newSchemaGenerator()
	// Every problem response refers to Problem.
	if _, err := gen.ref(Problem{}); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, rt := range routes {
		if seen[rt.operation] {
			return nil, fmt.Errorf("operation %s is declared twice", rt.operation)
		}
		seen[rt.operation] = true
		op, err := operation(gen, rt)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", rt.method, rt.pattern, err)
		}
		item := doc.Paths.Value(rt.pattern)
		if item == nil {
			item = &openapi3.PathItem{}
			doc.Paths.Set(rt.pattern, item)
		}
		if item.GetOperation(rt.method) != nil {
			return nil, fmt.Errorf("%s %s is declared twice", rt.method, rt.pattern)
		}
		item.SetOperation(rt.method, op)
	}
	for name := range operationNotes {
		if !seen[name] {
			return nil, fmt.Errorf("operationNotes has %s, which no route has", name)
		}
	}
	if err := gen.unused(); err != nil {
		return nil, err
	}
	doc.Components.Schemas = gen.schemas
	return doc, nil
}

// operation describes one route.
func operation(gen *schemaGenerator, rt route) (*openapi3.Operation, error) {
	tag, err := tagFor(rt.pattern)
	if err != nil {
		return nil, err
	}
	notes := operationNotes[rt.operation]
	op := &openapi3.Operation{
		OperationID: rt.operation,
		Summary:     rt.summary,
		Description: strings.TrimSpace(notes.description + " " + accessDoc[rt.access]),
		Tags:        []string{tag},
		Responses:   openapi3.NewResponses(),
		Extensions:  map[string]any{"x-landlord-access": accessName[rt.access]},
	}
	if rt.access == open {
		op.Security = &openapi3.SecurityRequirements{}
	}
	problems := problemSet{}
	problems.add(http.StatusInternalServerError, CodeInternal)
	// A query parameter the operation does not read (checkQuery).
	problems.add(http.StatusBadRequest, CodeInvalidParameter)
	if rt.access != open {
		problems.add(http.StatusUnauthorized, CodeUnauthorized)
		// A reader on a write; on any route, an identity provider's
		// token that maps to no role, or that cannot be checked now.
		problems.add(http.StatusForbidden, CodeForbidden)
		if !slices.ContainsFunc(notes.also, func(o otherResponse) bool { return o.status == http.StatusServiceUnavailable }) {
			// (/readyz answers its own 503.)
			problems.add(http.StatusServiceUnavailable, CodeIdentityUnavailable)
		}
	}

	// Parameters: the path's, the documented query parameters and headers,
	// then If-Match where a change can be conditional.
	for _, m := range pathParam.FindAllStringSubmatch(rt.pattern, -1) {
		p, err := pathParameter(m[1])
		if err != nil {
			return nil, err
		}
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: p.param})
		for status, codes := range p.problems {
			problems.add(status, codes...)
		}
	}
	for _, p := range notes.params {
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: p.param})
		for status, codes := range p.problems {
			problems.add(status, codes...)
		}
	}
	if p := conditional(rt); p != nil {
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: p.param})
		for status, codes := range p.problems {
			problems.add(status, codes...)
		}
	}
	op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Ref: requestIDRef})

	if rt.request != nil {
		body, err := gen.ref(rt.request)
		if err != nil {
			return nil, err
		}
		gen.closed(body)
		types := []string{contentJSON}
		if rt.method == http.MethodPatch {
			body = gen.mergePatch(body)
			types = []string{contentMergePatch, contentJSON}
		}
		op.RequestBody = &openapi3.RequestBodyRef{Value: &openapi3.RequestBody{
			Required: !rt.bodyOptional,
			Content:  openapi3.NewContentWithSchemaRef(body, types),
		}}
		problems.add(http.StatusBadRequest, CodeInvalidBody)
		problems.add(http.StatusRequestEntityTooLarge, CodeBodyTooLarge)
		// Nested deeper than jsonscan.MaxDepth, or a key repeated.
		problems.add(http.StatusUnprocessableEntity, CodeInvalidBody)
	}

	// The success response, then the others the notes give.
	content, err := responseContent(gen, rt.response)
	if err != nil {
		return nil, err
	}
	ok := &openapi3.Response{Content: content, Headers: responseHeaders()}
	desc := statusDoc(rt.status, notes.success)
	ok.Description = &desc
	switch rt.response.(type) {
	case Tenant:
		ok.Headers["ETag"] = etagHeader
	case Rollout:
		ok.Headers["ETag"] = rolloutETagHeader
	}
	if rt.status == http.StatusCreated {
		ok.Headers["Location"] = locationHeader
	}
	for name, h := range notes.headers {
		ok.Headers[name] = h
	}
	op.Responses.Set(strconv.Itoa(rt.status), &openapi3.ResponseRef{Value: ok})
	for _, o := range notes.also {
		if op.Responses.Value(strconv.Itoa(o.status)) != nil {
			return nil, fmt.Errorf("response %d is described twice", o.status)
		}
		content, err := responseContent(gen, o.body)
		if err != nil {
			return nil, err
		}
		desc := statusDoc(o.status, o.description)
		op.Responses.Set(strconv.Itoa(o.status), &openapi3.ResponseRef{Value: &openapi3.Response{
			Description: &desc, Content: content, Headers: responseHeaders(),
		}})
	}
	for status, codes := range notes.problems {
		problems.add(status, codes...)
	}
	for _, status := range problems.statuses() {
		if op.Responses.Value(strconv.Itoa(status)) != nil {
			return nil, fmt.Errorf("response %d is both a success and a problem", status)
		}
		op.Responses.Set(strconv.Itoa(status), problemResponse(status, problems[status]))
	}
	return op, nil
}

// conditional returns the If-Match parameter of a route that changes a
// tenant or a rollout, and nil for the others.
func conditional(rt route) *parameter {
	switch {
	case strings.Contains(rt.pattern, "{tenant}") &&
		(rt.method == http.MethodPut || rt.method == http.MethodPatch || rt.method == http.MethodDelete):
		return &ifMatchParam
	case strings.HasPrefix(rt.pattern, "/v1/rollouts/{rollout}/") && rt.method == http.MethodPost:
		return &rolloutIfMatchParam
	}
	return nil
}

func responseContent(gen *schemaGenerator, body any) (openapi3.Content, error) {
	switch b := body.(type) {
	case nil:
		return nil, nil
	case contentDescriber:
		return b.openAPIContent(), nil
	}
	ref, err := gen.ref(body)
	if err != nil {
		return nil, err
	}
	return openapi3.NewContentWithSchemaRef(ref, []string{contentJSON}), nil
}

func responseHeaders() openapi3.Headers {
	return openapi3.Headers{"X-Request-ID": {Ref: "#/components/headers/X-Request-ID"}}
}

func statusDoc(status int, doc string) string {
	if doc == "" {
		return http.StatusText(status)
	}
	return http.StatusText(status) + ": " + doc
}

// problemSet collects the problem codes of an operation by status.
type problemSet map[int][]string

func (p problemSet) add(status int, codes ...string) {
	for _, c := range codes {
		if !slices.Contains(p[status], c) {
			p[status] = append(p[status], c)
		}
	}
}

func (p problemSet) statuses() []int {
	out := make([]int, 0, len(p))
	for s := range p {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// problemDoc says when each status is answered.
var problemDoc = map[int]string{
	http.StatusBadRequest:            "the request is malformed; errors name each field, parameter or header at fault",
	http.StatusUnauthorized:          "no bearer token, or one that is not valid, expired or for another audience (the answer carries WWW-Authenticate)",
	http.StatusForbidden:             "the caller may only read, or their identity provider token maps to no role",
	http.StatusNotFound:              "what the request names does not exist",
	http.StatusConflict:              "the request conflicts with the current state of what it names",
	http.StatusPreconditionFailed:    "what the request changes changed since the ETag sent in If-Match was read; read it again",
	http.StatusRequestEntityTooLarge: "the body is larger than the server's limit (1 MiB unless configured); the rest is not read",
	http.StatusUnprocessableEntity:   "the request is well-formed but cannot be accepted; errors name every violation",
	http.StatusInternalServerError:   "landlord could not handle the request; the request id finds the cause in its log",
	http.StatusBadGateway:            "the compute provider did not answer",
	http.StatusServiceUnavailable:    "landlord cannot take the request now; the code says why (the database, the identity provider's keys, a compute provider not enabled), and Retry-After, when sent, when to try again",
	http.StatusNotImplemented:        "this server keeps no plans or rollouts",
}

// problemResponse is a problem+json answer that carries one of codes.
func problemResponse(status int, codes []string) *openapi3.ResponseRef {
	slices.Sort(codes)
	desc := statusDoc(status, problemDoc[status])
	code := &openapi3.Schema{Enum: make([]any, len(codes))}
	for i, c := range codes {
		code.Enum[i] = c
	}
	schema := &openapi3.Schema{AllOf: openapi3.SchemaRefs{
		openapi3.NewSchemaRef(problemRef, nil),
		{Value: &openapi3.Schema{Properties: openapi3.Schemas{
			"status": {Value: &openapi3.Schema{Const: status}},
			"code":   {Value: code},
		}}},
	}}
	res := &openapi3.Response{
		Description: &desc,
		Headers:     responseHeaders(),
		Content:     openapi3.Content{contentProblem: openapi3.NewMediaType().WithSchema(schema)},
	}
	if status == http.StatusUnauthorized {
		res.Headers["WWW-Authenticate"] = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: `Bearer realm="landlord", with error="invalid_token" when the request sent a token that is not valid`,
			Schema:      openapi3.NewStringSchema().NewRef(),
		}}}
	}
	return &openapi3.ResponseRef{Value: res}
}

var accessName = map[access]string{open: "open", read: "read", write: "write"}

var accessDoc = map[access]string{
	open:  "Needs no token.",
	read:  "Needs a token; a reader token will do.",
	write: "Needs an admin token.",
}
