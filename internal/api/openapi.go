package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jaxxstorm/landlord/internal/api/openapi"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// The OpenAPI document is generated (by package openapi) from the route
// table and the wire types the handlers read and write, so that it
// describes what is served. What neither can tell (the parameters a handler
// reads, the problems it answers beyond those every route of its kind has)
// is in operationNotes; building the document fails when a note names no
// route or a route has a path parameter nothing describes.

var openAPIOnce struct {
	sync.Once
	doc []byte
	err error
}

// openAPIJSON returns the OpenAPI document, built on first use. It does not
// depend on a server's options, so one document serves every server.
func openAPIJSON() ([]byte, error) {
	openAPIOnce.Do(func() {
		ops, err := operations(new(Server).routes())
		if err == nil {
			openAPIOnce.doc, err = openapi.JSON(ops)
		}
		if err != nil {
			openAPIOnce.err = fmt.Errorf("api: openapi document: %w", err)
		}
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

// operations describes routes for the OpenAPI document: each with its
// notes, and with the parameters and problems that every route of its kind
// has, because dispatch and the body readers answer them.
func operations(routes []route) ([]openapi.Operation, error) {
	seen := map[string]bool{}
	out := make([]openapi.Operation, 0, len(routes))
	for _, rt := range routes {
		seen[rt.operation] = true
		op, err := operation(rt)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", rt.method, rt.pattern, err)
		}
		out = append(out, op)
	}
	for name := range operationNotes {
		if !seen[name] {
			return nil, fmt.Errorf("operationNotes has %s, which no route has", name)
		}
	}
	return out, nil
}

var accessOf = map[access]openapi.Access{open: openapi.Open, read: openapi.Read, write: openapi.Write}

// operation describes one route.
func operation(rt route) (openapi.Operation, error) {
	notes := operationNotes[rt.operation]
	op := openapi.Operation{
		Method: rt.method, Pattern: rt.pattern, ID: rt.operation,
		Summary: rt.summary, Description: notes.description,
		Access:  accessOf[rt.access],
		Request: openAPIBody(rt.request), BodyOptional: rt.bodyOptional, MergePatch: rt.method == http.MethodPatch,
		Response: openAPIBody(rt.response), Status: rt.status, Success: notes.success,
		Headers: map[string]string{}, Also: notes.also, Problems: routeProblems(rt, notes),
	}

	// Parameters: the path's, the documented query parameters and headers,
	// then If-Match where a change can be conditional.
	for _, name := range pathNames(rt.pattern) {
		p, err := pathParameter(name)
		if err != nil {
			return openapi.Operation{}, err
		}
		op.Parameters = append(op.Parameters, p)
	}
	op.Parameters = append(op.Parameters, notes.params...)
	if p, ok := conditional(rt); ok {
		op.Parameters = append(op.Parameters, p)
	}

	switch rt.response.(type) {
	case wire.Tenant:
		op.Headers["ETag"] = etagDoc
	case wire.Rollout:
		op.Headers["ETag"] = rolloutETagDoc
	}
	if rt.status == http.StatusCreated {
		op.Headers["Location"] = locationDoc
	}
	for name, doc := range notes.headers {
		op.Headers[name] = doc
	}
	return op, nil
}

// routeProblems are the problems a route may answer, by status: those every
// route of its kind answers, and those of its notes.
func routeProblems(rt route, notes operationNote) map[int][]string {
	out := map[int][]string{
		http.StatusInternalServerError: {wire.CodeInternal},
		// A query parameter the operation does not read (checkQuery).
		http.StatusBadRequest: {wire.CodeInvalidParameter},
	}
	if rt.access != open {
		out[http.StatusUnauthorized] = []string{wire.CodeUnauthorized}
		// A reader on a write; on any route, an identity provider's token
		// that maps to no role, or that cannot be checked now.
		out[http.StatusForbidden] = []string{wire.CodeForbidden}
		if !slices.ContainsFunc(notes.also, func(o openapi.Response) bool { return o.Status == http.StatusServiceUnavailable }) {
			// (/readyz answers its own 503.)
			out[http.StatusServiceUnavailable] = []string{wire.CodeIdentityUnavailable}
		}
	}
	if rt.request != nil {
		out[http.StatusBadRequest] = append(out[http.StatusBadRequest], wire.CodeInvalidBody)
		out[http.StatusRequestEntityTooLarge] = []string{wire.CodeBodyTooLarge}
		// Nested deeper than jsonscan.MaxDepth, or a key repeated.
		out[http.StatusUnprocessableEntity] = []string{wire.CodeInvalidBody}
	}
	for status, codes := range notes.problems {
		out[status] = append(out[status], codes...)
	}
	return out
}

// openAPIBody is a route's request or response body as package openapi takes it.
func openAPIBody(v any) any {
	if c, ok := v.(contentDescriber); ok {
		return c.openAPIContent()
	}
	return v
}

// conditional returns the If-Match parameter of a route that changes a
// tenant or a rollout.
func conditional(rt route) (openapi.Parameter, bool) {
	switch {
	case strings.Contains(rt.pattern, "{tenant}") &&
		(rt.method == http.MethodPut || rt.method == http.MethodPatch || rt.method == http.MethodDelete):
		return ifMatchParam, true
	case strings.HasPrefix(rt.pattern, "/v1/rollouts/{rollout}/") && rt.method == http.MethodPost:
		return rolloutIfMatchParam, true
	}
	return openapi.Parameter{}, false
}
