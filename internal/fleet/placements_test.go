package fleet

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/jaxxstorm/landlord/sdk/violation"
)

func TestFragmentsAndLayer(t *testing.T) {
	config := json.RawMessage(`{"image":"app:2","env":{"TIER":"gold","REGION":"none"},"placements":{"eu":{"env":{"REGION":"eu"}},"us":{"image":"app:2-us"}}}`)
	for _, tt := range []struct{ placement, want string }{
		{"eu", `{"env":{"REGION":"eu","TIER":"gold"},"image":"app:2"}`},
		{"us", `{"env":{"REGION":"none","TIER":"gold"},"image":"app:2-us"}`},
		{"default", `{"env":{"REGION":"none","TIER":"gold"},"image":"app:2"}`},
	} {
		got, err := Layer(config, tt.placement)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(tt.want), &b) != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("the layer of %s is %s; want %s", tt.placement, got, tt.want)
		}
	}
	// A config without fragments is its own layer, as it is.
	plain := json.RawMessage(`{"image": "app:1"}`)
	if got, err := Layer(plain, "eu"); err != nil || string(got) != string(plain) {
		t.Errorf("the layer of a config without fragments: %s, %v; want it as it is", got, err)
	}
	for _, tt := range []struct {
		config   string
		pointers []string
	}{
		{`{"placements":["eu"]}`, []string{"/placements"}},
		{`{"placements":{"Bad Name":{},"eu":"x","us/1":{}}}`, []string{"/placements/Bad Name", "/placements/eu", "/placements/us~11"}},
	} {
		_, _, err := Fragments(json.RawMessage(tt.config))
		var got []string
		for _, v := range violation.Of(err) {
			got = append(got, v.Pointer)
		}
		if !errors.Is(err, ErrInvalid) || !slices.Equal(got, tt.pointers) {
			t.Errorf("Fragments(%s) = %v at %v; want ErrInvalid at %v", tt.config, err, got, tt.pointers)
		}
	}
}
