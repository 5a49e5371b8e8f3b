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

	"github.com/jaxxstorm/landlord/internal/compute/workload"
	"github.com/jaxxstorm/landlord/internal/violation"
)

// readBody reads a JSON request body of at most the configured size into
// dst, strictly: the content type must be one of types, unknown top-level
// fields and trailing data are refused. Problems are 400s naming the field;
// a body over the limit is a 413.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, dst any, types ...string) error {
	body, err := s.readRaw(w, r, types...)
	if err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// readRaw reads a request body of one of the content types, of at most the
// configured size; a larger one is refused without reading the rest.
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
		return nil, problem(http.StatusBadRequest, CodeInvalidBody, "the request body could not be read: "+err.Error())
	}
	return body, nil
}

func tooLarge(limit int64) error {
	return problem(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, fmt.Sprintf("the request body is larger than %d bytes", limit))
}

func checkContentType(r *http.Request, types ...string) error {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return problem(http.StatusBadRequest, CodeInvalidBody, fmt.Sprintf("charset %q is not supported; send UTF-8", cs),
			FieldError{Parameter: "Content-Type", Message: "charset must be utf-8"})
	}
	if err == nil {
		for _, t := range types {
			if mt == t {
				return nil
			}
		}
	}
	return problem(http.StatusBadRequest, CodeInvalidBody, fmt.Sprintf("Content-Type is %q; send %s", ct, strings.Join(types, " or ")),
		FieldError{Parameter: "Content-Type", Message: "must be " + strings.Join(types, " or ")})
}

// decodeStrict decodes body into dst, reporting unknown fields, wrong types
// and malformed JSON with the pointer of the field.
func decodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return problem(http.StatusBadRequest, CodeInvalidBody, "the request body is empty; send a JSON object")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return problem(http.StatusBadRequest, CodeInvalidBody, "the request body is not a JSON object: "+syntaxDetail(body, err))
	}
	known := jsonFields(dst)
	var errs []FieldError
	for k := range top {
		if known != nil && !slices.Contains(known, k) {
			errs = append(errs, FieldError{Pointer: violation.Pointer(k), Message: "unknown field"})
		}
	}
	if len(errs) > 0 {
		return problem(http.StatusBadRequest, CodeInvalidBody, "the request body has unknown fields", sortErrors(errs)...)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			ptr := "/" + strings.ReplaceAll(typeErr.Field, ".", "/")
			return problem(http.StatusBadRequest, CodeInvalidBody, "a field has the wrong type",
				FieldError{Pointer: ptr, Message: fmt.Sprintf("must be %s, not a JSON %s", jsonKind(typeErr.Type), typeErr.Value)})
		}
		return problem(http.StatusBadRequest, CodeInvalidBody, "the request body is not valid: "+err.Error())
	}
	if dec.More() {
		return problem(http.StatusBadRequest, CodeInvalidBody, "the request body has data after the JSON object")
	}
	return nil
}

func syntaxDetail(body []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("found a JSON %s", te.Value)
	}
	return err.Error()
}

// jsonFields returns the JSON names of the fields of the struct dst points
// to; nil when it is not a struct (a map takes any key).
func jsonFields(dst any) []string {
	if reflect.TypeOf(dst).Elem().Kind() != reflect.Struct {
		return nil
	}
	return workload.FieldNames(dst)
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "JSON"
		}
		return "an array"
	case reflect.Bool:
		return "a boolean"
	default:
		return "a number"
	}
}

func sortErrors(errs []FieldError) []FieldError {
	slices.SortFunc(errs, func(a, b FieldError) int { return strings.Compare(a.Pointer, b.Pointer) })
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
