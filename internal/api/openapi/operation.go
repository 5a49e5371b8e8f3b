package openapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Operation is what the document says of one operation: the route that
// serves it and what its handler reads and answers.
type Operation struct {
	// Method and Pattern are the route's, as http.ServeMux takes them
	// without the method: "GET", "/v1/tenants/{tenant}".
	Method, Pattern string
	// ID is the operationId, unique in the document.
	ID string
	// Summary is one line; Description says more, and is followed by what
	// Access needs.
	Summary, Description string
	Access               Access
	// Parameters are those the handler reads: the path's first, then query
	// parameters and headers, in the order the document lists them. Every
	// path parameter of Pattern must be among them.
	Parameters []Parameter
	// Request is a value of the request body's type, a struct; nil when the
	// operation takes no body. The body's schema refuses unknown members.
	Request any
	// BodyOptional says the request body may be left out.
	BodyOptional bool
	// MergePatch says the body is an RFC 7396 merge patch of Request, sent
	// as application/merge-patch+json or application/json.
	MergePatch bool
	// Response is a value of the success response body's type: a struct
	// sent as JSON, or an openapi3.Content for a body that is not the JSON
	// of a Go type; nil when there is no body.
	Response any
	// Status is the success status.
	Status int
	// Success says more of the success response than its status text.
	Success string
	// Headers are sent with the success response beyond X-Request-ID, by
	// name, with what each says.
	Headers map[string]string
	// Also are the other responses that are not problems.
	Also []Response
	// Problems are the problem codes the operation may answer, by status,
	// beyond those of its parameters. A code may be given twice.
	Problems map[int][]string
}

// Access is who may call an operation.
type Access int

const (
	// Open needs no token.
	Open Access = iota
	// Read needs a token, of any role.
	Read
	// Write needs an admin token.
	Write
)

// Parameter is a path, query or header parameter an operation reads.
type Parameter struct {
	Name string
	// In is openapi3.ParameterInPath, ParameterInQuery or ParameterInHeader.
	// A path parameter is required; the others are not.
	In          string
	Description string
	Schema      *openapi3.Schema
	// Repeated says a query parameter may be given several times.
	Repeated bool
	// Problems are the problem codes a bad value gets, by status.
	Problems map[int][]string
}

// Response is a response of an operation that is neither its success nor a
// problem.
type Response struct {
	Status      int
	Description string
	// Body is as Operation.Response.
	Body any
}

var accessName = map[Access]string{Open: "open", Read: "read", Write: "write"}

var accessDoc = map[Access]string{
	Open:  "Needs no token.",
	Read:  "Needs a token; a reader token will do.",
	Write: "Needs an admin token.",
}

var pathParam = regexp.MustCompile(`\{([^}]*)\}`)

// operation describes o.
func operation(gen *schemaGenerator, o Operation) (*openapi3.Operation, error) {
	tag, err := tagFor(o.Pattern)
	if err != nil {
		return nil, err
	}
	name, known := accessName[o.Access]
	if !known {
		return nil, fmt.Errorf("access %d is none of Open, Read and Write", o.Access)
	}
	op := &openapi3.Operation{
		OperationID: o.ID,
		Summary:     o.Summary,
		Description: strings.TrimSpace(o.Description + " " + accessDoc[o.Access]),
		Tags:        []string{tag},
		Responses:   openapi3.NewResponses(),
		Extensions:  map[string]any{"x-landlord-access": name},
	}
	if o.Access == Open {
		op.Security = &openapi3.SecurityRequirements{}
	}
	problems := problemSet{}
	for status, codes := range o.Problems {
		problems.add(status, codes...)
	}

	for _, m := range pathParam.FindAllStringSubmatch(o.Pattern, -1) {
		if !slices.ContainsFunc(o.Parameters, func(p Parameter) bool { return p.In == openapi3.ParameterInPath && p.Name == m[1] }) {
			return nil, fmt.Errorf("path parameter {%s}: no parameter describes it", m[1])
		}
	}
	for _, p := range o.Parameters {
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: parameter(p)})
		for status, codes := range p.Problems {
			problems.add(status, codes...)
		}
	}
	op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Ref: requestIDRef})

	if o.Request != nil {
		if op.RequestBody, err = requestBody(gen, o); err != nil {
			return nil, err
		}
	}
	if err := responses(gen, op.Responses, o, problems); err != nil {
		return nil, err
	}
	return op, nil
}

// requestBody describes the body o takes.
func requestBody(gen *schemaGenerator, o Operation) (*openapi3.RequestBodyRef, error) {
	body, err := gen.ref(o.Request)
	if err != nil {
		return nil, err
	}
	gen.closed(body)
	types := []string{contentJSON}
	if o.MergePatch {
		body = gen.mergePatch(body)
		types = []string{contentMergePatch, contentJSON}
	}
	return &openapi3.RequestBodyRef{Value: &openapi3.RequestBody{
		Required: !o.BodyOptional,
		Content:  openapi3.NewContentWithSchemaRef(body, types),
	}}, nil
}

// parameter is the OpenAPI form of p.
func parameter(p Parameter) *openapi3.Parameter {
	out := &openapi3.Parameter{Name: p.Name, In: p.In, Required: p.In == openapi3.ParameterInPath, Description: p.Description}
	if p.Schema != nil {
		out.Schema = p.Schema.NewRef()
	}
	if p.Repeated {
		explode := true
		out.Style, out.Explode = openapi3.SerializationForm, &explode
	}
	return out
}
