package workload

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// SplitBlock reads an operator's configuration block for a provider (the
// keys under compute.<name>). Keys that are the provider's own settings (the
// JSON names of the fields of *settings, a pointer to a struct) are decoded
// into settings; every other key is a tenant default and must be a top-level
// property of the provider's config schema. It returns the defaults as a
// JSON object, or nil when there are none; the registry checks their values
// against the compiled schema when the provider is registered. Every problem
// is reported, each with the pointer of its key in the block.
func SplitBlock(name string, block json.RawMessage, settings any, schema json.RawMessage) (json.RawMessage, error) {
	settingKeys := FieldNames(settings)
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, fmt.Errorf("compute.%s: config schema: %w", name, err)
	}
	raw := map[string]json.RawMessage{}
	if !jsonscan.IsNull(block) {
		if err := json.Unmarshal(block, &raw); err != nil {
			return nil, fmt.Errorf("compute.%s: the block must be a JSON object: %w", name, err)
		}
	}
	defaults := map[string]json.RawMessage{}
	var errs violation.List
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		at := "/" + violation.Escape(key)
		switch {
		case slices.Contains(settingKeys, key):
			// One key at a time, so that an error names its key.
			one, _ := json.Marshal(map[string]json.RawMessage{key: raw[key]})
			if err := json.Unmarshal(one, settings); err != nil {
				errs.Add(at, "%s", settingError(err))
			}
		case doc.Properties[key] != nil:
			defaults[key] = raw[key]
		default:
			errs.Add(at, "unknown key; settings are %s, and tenant defaults may set any of %s",
				strings.Join(settingKeys, ", "), strings.Join(slices.Sorted(maps.Keys(doc.Properties)), ", "))
		}
	}
	if err := errs.Err(ErrInvalid); err != nil {
		return nil, fmt.Errorf("compute.%s: %w", name, err)
	}
	if len(defaults) == 0 {
		return nil, nil
	}
	return json.Marshal(defaults)
}

// FieldNames returns the JSON names of the exported fields of the struct v
// points to (or is), sorted.
func FieldNames(v any) []string {
	var names []string
	for name := range fields(reflect.ValueOf(v)) {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// fields yields the JSON name and value of each exported field of the
// struct v holds or points to, as encoding/json names them.
func fields(v reflect.Value) func(yield func(string, reflect.Value) bool) {
	return func(yield func(string, reflect.Value) bool) {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch name {
			case "-":
				continue
			case "":
				name = f.Name
			}
			if !yield(name, v.Field(i)) {
				return
			}
		}
	}
}

// ChangedFields returns the JSON names of the fields whose values differ
// between two structs of the same type (or pointers to them), sorted. Nil
// and a zero value are the same.
func ChangedFields(a, b any) []string {
	if a != nil && b != nil && reflect.TypeOf(a) != reflect.TypeOf(b) {
		return FieldNames(b)
	}
	theirs := map[string]reflect.Value{}
	for name, v := range fields(reflect.ValueOf(b)) {
		theirs[name] = v
	}
	var changed []string
	for name, v := range fields(reflect.ValueOf(a)) {
		w, ok := theirs[name]
		delete(theirs, name)
		if (!ok && !v.IsZero()) || (ok && !reflect.DeepEqual(v.Interface(), w.Interface())) {
			changed = append(changed, name)
		}
	}
	for name, w := range theirs {
		if !w.IsZero() {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	return changed
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// settingError words a decoding error of one setting.
func settingError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return err.Error()
	}
	want := "an object"
	switch t := typeErr.Type; {
	case reflect.PointerTo(t).Implements(textUnmarshaler):
		want = "a string"
	case t.Kind() == reflect.Bool:
		want = "a boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		want = "an integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		want = "a number"
	case t.Kind() == reflect.String:
		want = "a string"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		want = "an array"
	}
	return fmt.Sprintf("must be %s, not a JSON %s", want, typeErr.Value)
}
