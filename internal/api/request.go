package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// readRaw reads a request body of one of the content types, of at most the
// configured size; a larger one is refused without reading the rest. The
// handlers then decode it with decodeStrict or decodePatch: a body nested
// too deep or with a repeated key is a 422, other problems 400s naming
// every field at fault; a body over the limit is a 413.
func (s *Server) readRaw(w http.ResponseWriter, r *http.Request, types ...string) ([]byte, error) {
	if err := checkContentType(r, types...); err != nil {
		return nil, err
	}
	if r.ContentLength > s.opts.MaxBodyBytes {
		return nil, tooLarge(s.opts.MaxBodyBytes)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return nil, tooLarge(s.opts.MaxBodyBytes)
	}
	if err != nil {
		return nil, problem(http.StatusBadRequest, wire.CodeInvalidBody, "the request body could not be read: "+err.Error())
	}
	return body, nil
}

func tooLarge(limit int64) error {
	return problem(http.StatusRequestEntityTooLarge, wire.CodeBodyTooLarge, fmt.Sprintf("the request body is larger than %d bytes", limit))
}

func checkContentType(r *http.Request, types ...string) error {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return problem(http.StatusBadRequest, wire.CodeInvalidBody, fmt.Sprintf("charset %q is not supported; send UTF-8", cs),
			wire.FieldError{Parameter: "Content-Type", Message: "charset must be utf-8"})
	}
	if err == nil {
		for _, t := range types {
			if mt == t {
				return nil
			}
		}
	}
	return problem(http.StatusBadRequest, wire.CodeInvalidBody, fmt.Sprintf("Content-Type is %q; send %s", ct, strings.Join(types, " or ")),
		wire.FieldError{Parameter: "Content-Type", Message: "must be " + strings.Join(types, " or ")})
}

// decodeStrict decodes body into dst, a pointer to a struct or a map,
// strictly. First, before anything decodes it, one pass over its tokens
// refuses a body that nests deeper than jsonscan.MaxDepth or repeats a key
// in an object: a 422 naming the first offence. Then malformed JSON and
// trailing data are 400s; unknown fields (of a struct, compared exactly,
// not as encoding/json matches them) and values of the wrong type are a 400
// that lists every one of them, each at its pointer, with what the
// well-typed fields break (requestRules).
func decodeStrict(body []byte, dst any) error {
	if err := checkBody(body); err != nil {
		return err
	}
	var top map[string]json.RawMessage
	err := json.Unmarshal(body, &top)
	if err == nil {
		if known := jsonFields(dst); known != nil {
			for k := range top {
				if !slices.Contains(known, k) {
					err = errUnknownField
				}
			}
		}
	}
	if err == nil && nestsStructs(reflect.TypeOf(dst).Elem()) {
		// encoding/json ignores unknown members of nested objects (a
		// wave's, a plan's): shape finds them.
		var doc any
		if decodeNumbers(body, &doc) == nil {
			s := shape{unknown: "unknown field"}
			s.check(doc, reflect.TypeOf(dst).Elem(), "")
			if len(s.errs) > 0 {
				err = errUnknownField
			}
		}
	}
	if err == nil {
		if err = json.Unmarshal(body, dst); err == nil {
			return nil
		}
	}
	var doc any
	if err := decodeNumbers(body, &doc); err != nil {
		return problem(http.StatusBadRequest, wire.CodeInvalidBody, "the request body is not a JSON object: "+syntaxDetail(err))
	}
	if _, ok := doc.(map[string]any); !ok {
		return problem(http.StatusBadRequest, wire.CodeInvalidBody, "the request body is not a JSON object: found "+valueKind(doc))
	}
	s := shape{unknown: "unknown field"}
	s.check(doc, reflect.TypeOf(dst).Elem(), "")
	if len(s.errs) == 0 {
		// Not a type: a value its type's UnmarshalJSON or UnmarshalText refused.
		return problem(http.StatusBadRequest, wire.CodeInvalidBody, "the request body is not valid: "+err.Error())
	}
	_ = json.Unmarshal(body, dst) // the fields that fit, for requestRules
	detail := "a field is unknown or has the wrong type"
	if len(s.errs) > 1 {
		detail = fmt.Sprintf("%d fields are unknown or have the wrong type", len(s.errs))
	}
	return problem(http.StatusBadRequest, wire.CodeInvalidBody, detail, sortErrors(append(s.errs, requestRules(dst, s.errs)...))...)
}

var errUnknownField = errors.New("unknown field")

// nestsStructs reports whether a request type has a struct below its top
// level (in a field, a slice or a map), whose unknown members only shape
// finds.
func nestsStructs(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	var below func(t reflect.Type) bool
	below = func(t reflect.Type) bool {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			return t != rawMessageType && below(t.Elem())
		case reflect.Struct:
			return true
		}
		return false
	}
	for i := range t.NumField() {
		if below(t.Field(i).Type) {
			return true
		}
	}
	return false
}

// jsonFields returns the JSON names of the fields of the struct dst points
// to; nil when it is not a struct (a map takes any key).
func jsonFields(dst any) []string {
	if reflect.TypeOf(dst).Elem().Kind() != reflect.Struct {
		return nil
	}
	return workload.FieldNames(dst)
}

// checkBody refuses an empty body; one with a string that is not text
// (jsonscan.InvalidText: bytes that are not UTF-8, half a surrogate pair),
// a 400 at its pointer, since decoding would change it into U+FFFD; and one
// that jsonscan.Check finds nests too deep or repeats a key. Every request
// body passes here, so the rule is the same for every field.
func checkBody(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return problem(http.StatusBadRequest, wire.CodeInvalidBody, "the request body is empty; send a JSON object")
	}
	if v, bad := jsonscan.InvalidText(body); bad {
		return problem(http.StatusBadRequest, wire.CodeInvalidBody, "a string of the request body is not UTF-8 text; send every string as UTF-8, and escape only whole characters",
			wire.FieldError{Pointer: v.Pointer, Message: v.Message})
	}
	if v, bad := jsonscan.Check(body, jsonscan.MaxDepth); bad {
		return problem(http.StatusUnprocessableEntity, wire.CodeInvalidBody, "a value of the request body "+v.Message,
			wire.FieldError{Pointer: v.Pointer, Message: v.Message})
	}
	return nil
}

// decodeNumbers decodes one JSON value, keeping numbers as json.Number,
// and refuses trailing data.
func decodeNumbers(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// tenantPatch is the shape of a PATCH body: null removes a label or an
// annotation, or all of them.
type tenantPatch struct {
	ComputeConfig     json.RawMessage         `json:"compute_config"`
	Placements        []wire.PlacementRequest `json:"placements"`
	Labels            map[string]*string      `json:"labels"`
	Annotations       map[string]*string      `json:"annotations"`
	Plan              *wire.PlanChoice        `json:"plan"`
	MaintenanceWindow *wire.MaintenanceWindow `json:"maintenance_window"`
}

// decodePatch reads a PATCH body as decodeStrict reads others, into the
// fields it names (a field set to null is there, as "null"): every unknown
// field and every value of the wrong type is listed at once.
func decodePatch(body []byte) (map[string]json.RawMessage, error) {
	if err := checkBody(body); err != nil {
		return nil, err
	}
	var doc any
	if err := decodeNumbers(body, &doc); err != nil {
		return nil, problem(http.StatusBadRequest, wire.CodeInvalidBody, "the request body is not a JSON object: "+syntaxDetail(err))
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, problem(http.StatusBadRequest, wire.CodeInvalidBody, "the request body is not a JSON object: found "+valueKind(doc))
	}
	s := shape{unknown: "unknown field; a patch may change compute_config, labels, annotations, plan and maintenance_window"}
	s.check(doc, reflect.TypeFor[tenantPatch](), "")
	if len(s.errs) > 0 {
		return nil, problem(http.StatusBadRequest, wire.CodeInvalidBody, "the patch has unknown fields or values of the wrong type", sortErrors(s.errs)...)
	}
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(body, &patch); err != nil {
		return nil, problem(http.StatusBadRequest, wire.CodeInvalidBody, "the request body is not a JSON object: "+syntaxDetail(err))
	}
	return patch, nil
}

// requestRules returns what the fields of a request that decoded well break
// (the name, label and annotation rules; compute_config must be an object),
// so that a body with a type error reports them with it rather than one
// request later. Fields under a type error are skipped.
func requestRules(dst any, typeErrs []wire.FieldError) []wire.FieldError {
	bad := func(field string) bool {
		return slices.ContainsFunc(typeErrs, func(e wire.FieldError) bool {
			return e.Pointer == field || strings.HasPrefix(e.Pointer, field+"/")
		})
	}
	var out []wire.FieldError
	var config json.RawMessage
	var labels, annotations map[string]string
	switch r := dst.(type) {
	case *wire.CreateTenantRequest:
		if !bad("/name") {
			if err := tenant.ValidateName(r.Name); err != nil {
				out = append(out, wire.FieldError{Pointer: "/name", Message: strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": ")})
			}
		}
		config, labels, annotations = r.ComputeConfig, r.Labels, r.Annotations
	case *wire.ReplaceTenantRequest:
		config, labels, annotations = r.ComputeConfig, r.Labels, r.Annotations
	default:
		return nil
	}
	if !bad("/compute_config") {
		var refused *service.Error
		if errors.As(service.RequireObject(config, "/compute_config"), &refused) {
			out = append(out, fieldErrors(refused.Fields)...)
		}
	}
	if bad("/labels") {
		labels = nil
	}
	if bad("/annotations") {
		annotations = nil
	}
	for _, v := range violation.Of(tenant.ValidateLabels(labels, annotations)) {
		out = append(out, wire.FieldError{Pointer: v.Pointer, Message: v.Message})
	}
	return out
}

func syntaxDetail(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	return err.Error()
}

func sortErrors(errs []wire.FieldError) []wire.FieldError {
	slices.SortFunc(errs, func(a, b wire.FieldError) int { return strings.Compare(a.Pointer, b.Pointer) })
	return errs
}

// writeRaw sends an encoded JSON body with its headers.
func writeRaw(w http.ResponseWriter, status int, header map[string]string, body []byte) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeJSON sends v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readOptional reads a JSON body that may be left out into v, as
// decodeStrict reads one: an empty body leaves v as it is.
func (s *Server) readOptional(w http.ResponseWriter, r *http.Request, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	body, err := s.readRaw(w, r, contentJSON)
	if err != nil || len(body) == 0 {
		return err
	}
	return decodeStrict(body, v)
}
