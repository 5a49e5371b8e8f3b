package openapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// responses sets the responses of o: its success, the others it gives, and
// its problems.
func responses(gen *schemaGenerator, out *openapi3.Responses, o Operation, problems problemSet) error {
	// The success response, then the others.
	content, err := responseContent(gen, o.Response)
	if err != nil {
		return err
	}
	ok := &openapi3.Response{Content: content, Headers: responseHeaders()}
	desc := statusDoc(o.Status, o.Success)
	ok.Description = &desc
	for name, doc := range o.Headers {
		ok.Headers[name] = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: doc, Schema: openapi3.NewStringSchema().NewRef(),
		}}}
	}
	out.Set(strconv.Itoa(o.Status), &openapi3.ResponseRef{Value: ok})
	for _, r := range o.Also {
		if out.Value(strconv.Itoa(r.Status)) != nil {
			return fmt.Errorf("response %d is described twice", r.Status)
		}
		content, err := responseContent(gen, r.Body)
		if err != nil {
			return err
		}
		desc := statusDoc(r.Status, r.Description)
		out.Set(strconv.Itoa(r.Status), &openapi3.ResponseRef{Value: &openapi3.Response{
			Description: &desc, Content: content, Headers: responseHeaders(),
		}})
	}
	for _, status := range problems.statuses() {
		if out.Value(strconv.Itoa(status)) != nil {
			return fmt.Errorf("response %d is both a success and a problem", status)
		}
		out.Set(strconv.Itoa(status), problemResponse(status, problems[status]))
	}
	return nil
}

func responseContent(gen *schemaGenerator, body any) (openapi3.Content, error) {
	switch b := body.(type) {
	case nil:
		return nil, nil
	case openapi3.Content:
		return b, nil
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
