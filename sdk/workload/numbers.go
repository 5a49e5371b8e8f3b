package workload

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// IntegralNumbers rewrites, in the maps and slices of a decoded JSON value,
// every number that is an integer written with a fraction or an exponent
// (80.0, 1e2, 8.0e1) as that integer (80, 100), when it fits an int64. A
// JSON Schema "integer" accepts such numbers and encoding/json does not
// decode them into Go integers: rewritten, a config the schema accepted
// decodes. Other numbers are left as written.
func IntegralNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			v[k] = IntegralNumbers(c)
		}
	case []any:
		for i, c := range v {
			v[i] = IntegralNumbers(c)
		}
	case json.Number:
		if !strings.ContainsAny(string(v), ".eE") {
			return v
		}
		r, ok := new(big.Rat).SetString(string(v))
		if ok && r.IsInt() && r.Num().IsInt64() {
			return json.Number(r.Num().String())
		}
	}
	return v
}

// DecodeError words an error of json.Unmarshal(doc, …) as a violation of
// kind ErrInvalid at the pointer, in doc, of the value that did not fit,
// saying what it must be without naming Go types ("must be an integer from
// 0 to 9223372036854775807"). Other errors are returned as they are.
func DecodeError(doc json.RawMessage, err error) error {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return err
	}
	return violation.New(ErrInvalid, jsonscan.PointerAt(doc, typeErr.Offset), "%s", typeMessage(typeErr))
}

// typeMessage says what a value that did not fit must be.
func typeMessage(typeErr *json.UnmarshalTypeError) string {
	t := typeErr.Type
	got, _, _ := strings.Cut(typeErr.Value, " ") // "number 1e30": the JSON type
	switch {
	case got == "number" && t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		shift := 64 - t.Bits()
		return "must be an integer from " + strconv.FormatInt(math.MinInt64>>shift, 10) + " to " + strconv.FormatInt(math.MaxInt64>>shift, 10)
	case got == "number" && t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr:
		return "must be an integer from 0 to " + strconv.FormatUint(math.MaxUint64>>(64-t.Bits()), 10)
	}
	return settingError(typeErr)
}
