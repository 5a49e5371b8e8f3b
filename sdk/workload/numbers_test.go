package workload_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

func TestIntegralNumbers(t *testing.T) {
	in := map[string]any{
		"a": json.Number("80.0"), "b": json.Number("1e2"), "c": json.Number("8.0E1"), "d": json.Number("-0.0"),
		"keep": []any{json.Number("80.5"), json.Number("1e400"), json.Number("12345678901234567891"), json.Number("7"), "80.0"},
		"deep": map[string]any{"e": json.Number("2.000")},
	}
	want := map[string]any{
		"a": json.Number("80"), "b": json.Number("100"), "c": json.Number("80"), "d": json.Number("0"),
		"keep": []any{json.Number("80.5"), json.Number("1e400"), json.Number("12345678901234567891"), json.Number("7"), "80.0"},
		"deep": map[string]any{"e": json.Number("2")},
	}
	if diff := cmp.Diff(want, workload.IntegralNumbers(in)); diff != "" {
		t.Errorf("IntegralNumbers (-want +got):\n%s", diff)
	}
}

func TestDecodeError(t *testing.T) {
	type port struct {
		Port  uint8  `json:"port"`
		Count int32  `json:"count"`
		Name  string `json:"name"`
	}
	type doc struct {
		Ports []port `json:"ports"`
	}
	for _, tt := range []struct{ raw, pointer, message string }{
		{`{"ports":[{},{"port":300}]}`, "/ports/1/port", "must be an integer from 0 to 255"},
		{`{"ports":[{"count":1e10}]}`, "/ports/0/count", "must be an integer from -2147483648 to 2147483647"},
		{`{"ports":[{"name":5}]}`, "/ports/0/name", "must be a string, not a JSON number"},
		{`{"ports":{"a":1}}`, "/ports", "must be an array, not a JSON object"},
	} {
		var d doc
		err := workload.DecodeError(json.RawMessage(tt.raw), json.Unmarshal([]byte(tt.raw), &d))
		v := violation.Of(err)
		if !errors.Is(err, workload.ErrInvalid) || len(v) != 1 || v[0].Pointer != tt.pointer || v[0].Message != tt.message {
			t.Errorf("%s: %v, want %s: %s", tt.raw, err, tt.pointer, tt.message)
		}
	}
	plain := errors.New("not a type error")
	if err := workload.DecodeError(nil, plain); err != plain {
		t.Errorf("DecodeError(plain) = %v", err)
	}
}
