package ecsfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
)

// targetPrefix is the service half of X-Amz-Target for ECS.
const targetPrefix = "AmazonEC2ContainerServiceV20141113."

// contentType is the AWS JSON 1.1 media type, sent both ways.
const contentType = "application/x-amz-json-1.1"

// maxBody bounds a request body; ECS refuses far smaller requests than this.
const maxBody = 4 << 20

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	// Every ECS response, error or not, carries a request id.
	w.Header().Set("x-amzn-RequestId", uuid.NewString())
	if s.opts.Latency > 0 {
		select {
		case <-time.After(s.opts.Latency):
		case <-r.Context().Done():
			return
		}
	}
	out, err := s.dispatch(r)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// dispatch checks the request the way the AWS front end does (method,
// signature, target) before the operation sees it.
func (s *Server) dispatch(r *http.Request) ([]byte, error) {
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		return nil, errorf(CodeUnknownOperation, "%s %s is not an ECS operation.", r.Method, r.URL.Path)
	}
	if err := s.checkSignature(r); err != nil {
		return nil, err
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, contentType) {
		return nil, errorf(CodeSerialization, "Unsupported Content-Type %q; ECS speaks %s.", ct, contentType)
	}
	name, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), targetPrefix)
	op, known := operations[name]
	if !ok || !known {
		return nil, errorf(CodeUnknownOperation, "Unknown operation %q.", r.Header.Get("X-Amz-Target"))
	}
	s.countCall(name)
	// ECS throttles before the operation runs: a refused request changes
	// nothing.
	if err := s.throttle(name); err != nil {
		return nil, err
	}
	if err := s.injectedFault(name); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, errorf(CodeSerialization, "Unable to read the request body: %v", err)
	}
	out, err := op(s, body)
	if err != nil {
		return nil, err
	}
	encoded, err := encodeJSON(out)
	if err != nil || !s.takeMalformed(name) {
		return encoded, err
	}
	return malform(encoded)
}

// checkSignature wants what SigV4 puts on a request. It does not verify the
// signature (the fake has no secret to check against) but does check the
// credential scope, which catches a client built for the wrong region.
func (s *Server) checkSignature(r *http.Request) error {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return errorf(CodeMissingAuth, "Missing Authentication Token")
	}
	params, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return errorf(CodeIncompleteSignature, "Authorization header requires the AWS4-HMAC-SHA256 algorithm.")
	}
	fields := map[string]string{}
	for p := range strings.SplitSeq(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		fields[k] = v
	}
	for _, k := range []string{"Credential", "SignedHeaders", "Signature"} {
		if fields[k] == "" {
			return errorf(CodeIncompleteSignature, "Authorization header requires '%s' parameter.", k)
		}
	}
	if r.Header.Get("X-Amz-Date") == "" {
		return errorf(CodeIncompleteSignature, "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return errorf(CodeIncompleteSignature, "Credential %q is not of the form <key>/<date>/<region>/<service>/aws4_request.", fields["Credential"])
	}
	if scope[2] != s.Region {
		return errorf(CodeInvalidSignature, "Credential should be scoped to a valid region, not '%s'.", scope[2])
	}
	if scope[3] != "ecs" {
		return errorf(CodeInvalidSignature, "Credential should be scoped to correct service: 'ecs'.")
	}
	return nil
}

// operation runs one ECS call on a raw request body and returns the SDK
// output struct to encode.
type operation func(s *Server, body []byte) (any, error)

// handle adapts a typed operation: it decodes the body into the SDK's own
// input struct and runs fn under the lock with the state brought up to now.
func handle[In, Out any](fn func(*Server, time.Time, *In) (*Out, error)) operation {
	return func(s *Server, body []byte) (any, error) {
		in := new(In)
		if err := decodeInput(body, in); err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		now := s.sync()
		out, err := fn(s, now, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// decodeInput decodes a request into the SDK's input struct. encoding/json
// matches keys case-insensitively, so the wire's lowerCamel names land in
// the SDK's fields, and a key the SDK has no field for is refused: a client
// sending it would be sending something ECS does not accept.
func decodeInput(body []byte, in any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return invalidParameter("Unrecognized field %s in the request; it is not part of %T.", field, in)
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			path := strings.Split(typeErr.Field, ".")
			for i, p := range path {
				path[i] = wireName(p)
			}
			return errorf(CodeSerialization, "Field %s: cannot read a JSON %s as %s.", strings.Join(path, "."), typeErr.Value, typeErr.Type)
		}
		return errorf(CodeSerialization, "Unable to parse the request body: %v", err)
	}
	if dec.More() {
		return errorf(CodeSerialization, "Unexpected data after the request body.")
	}
	return nil
}

// writeError sends err as an AWS JSON error. Anything that is not an
// apiError is a fault in the fake and goes out as a ServerException.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		log.Printf("ecsfake: internal error: %v", err)
		ae = errorf(CodeServer, "ecsfake internal error: %v", err)
	}
	body, mErr := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{ae.code, ae.message})
	if mErr != nil {
		body = fmt.Appendf(nil, `{"__type":%q}`, ae.code)
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(ae.status())
	w.Write(body)
}
