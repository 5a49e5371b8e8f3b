package api

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// shape compares a decoded JSON value (numbers as json.Number) with the Go
// type it is to be decoded into and lists every value that does not fit,
// each at its pointer, worded without Go's names: encoding/json reports the
// first only. Keys match struct fields exactly (encoding/json would take
// "NAME" for "name"); the request types embed no structs, whose fields
// shape would not promote.
type shape struct {
	// unknown is the message for a key a struct does not have.
	unknown string
	errs    []wire.FieldError
}

func (s *shape) add(at, format string, args ...any) {
	s.errs = append(s.errs, wire.FieldError{Pointer: at, Message: fmt.Sprintf(format, args...)})
}

// check lists what of v does not fit t. JSON null fits everything, as
// encoding/json leaves the Go value alone.
func (s *shape) check(v any, t reflect.Type, at string) {
	if v == nil || t == rawMessageType {
		return
	}
	if t == timeType {
		// A time is an RFC 3339 string.
		str, ok := v.(string)
		if !ok {
			s.wrong(v, t, at)
		} else if _, err := time.Parse(time.RFC3339, str); err != nil {
			s.add(at, "%s is not an RFC 3339 time such as 2026-12-02T10:00:00Z", wire.Quote(str))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		s.check(v, t.Elem(), at)
	case reflect.Interface:
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			s.wrong(v, t, at)
			return
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name != "-" {
				fields[cmp.Or(name, f.Name)] = f.Type
			}
		}
		for _, k := range sortedKeys(obj) {
			ft, known := fields[k]
			if !known {
				s.add(at+"/"+violation.Escape(k), "%s", s.unknown)
				continue
			}
			s.check(obj[k], ft, at+"/"+violation.Escape(k))
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			s.wrong(v, t, at)
			return
		}
		for _, k := range sortedKeys(obj) {
			s.check(obj[k], t.Elem(), at+"/"+violation.Escape(k))
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			s.wrong(v, t, at)
			return
		}
		for i, c := range arr {
			s.check(c, t.Elem(), at+"/"+strconv.Itoa(i))
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			s.wrong(v, t, at)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			s.wrong(v, t, at)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); !ok || err != nil {
			min, max := int64(-1)<<(t.Bits()-1), int64(math.MaxInt64)>>(64-t.Bits())
			s.add(at, "must be an integer from %d to %d, written without a fraction or exponent", min, max)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if _, err := strconv.ParseUint(string(n), 10, t.Bits()); !ok || err != nil {
			s.add(at, "must be an integer from 0 to %d, written without a fraction or exponent", uint64(math.MaxUint64)>>(64-t.Bits()))
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if _, err := strconv.ParseFloat(string(n), t.Bits()); !ok || err != nil {
			s.wrong(v, t, at)
		}
	default:
		s.wrong(v, t, at)
	}
}

func (s *shape) wrong(v any, t reflect.Type, at string) {
	s.add(at, "must be %s, not %s", jsonKind(t), valueKind(v))
}

// valueKind names the JSON type of a decoded value.
func valueKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

// jsonKind names the JSON a Go type takes.
// timeType is time.Time's type: a string in JSON.
var timeType = reflect.TypeFor[time.Time]()

func jsonKind(t reflect.Type) string {
	if t == timeType {
		return "an RFC 3339 time (a string)"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem()) + " or null"
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		if t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String {
			return "an object of strings"
		}
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Bool:
		return "a boolean"
	default:
		return "a number"
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
