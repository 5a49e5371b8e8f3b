package compute

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SplitProviderBlock reads an operator's configuration block for a provider
// (the keys under compute.<name>). Keys that are the provider's own settings
// (the json names of the fields of *settings, a pointer to a struct) are
// decoded into settings; every other key is a tenant default and must be a
// top-level field of the provider's config schema with a valid value. It
// returns the defaults as a JSON object, or nil when there are none. Every
// problem is reported, each with the pointer of its key in the block.
func SplitProviderBlock(name string, block json.RawMessage, settings any, schema *Schema) (json.RawMessage, error) {
	settingKeys := jsonFieldNames(settings)
	raw := map[string]json.RawMessage{}
	if !isNull(block) {
		if err := json.Unmarshal(block, &raw); err != nil {
			return nil, fmt.Errorf("compute.%s: the block must be a JSON object: %w", name, err)
		}
	}
	own := map[string]json.RawMessage{}
	defaults := map[string]any{}
	errs := &ValidationError{}
	for _, key := range sortedKeys(raw) {
		if settingKeys[key] {
			own[key] = raw[key]
			continue
		}
		sub, ok := schema.compiled.Properties[key]
		if !ok {
			errs.Add("/"+pointerEscape(key), "unknown key; settings are %s, and tenant defaults may set any of %s",
				strings.Join(sortedKeys(settingKeys), ", "), strings.Join(schema.propertyNames(), ", "))
			continue
		}
		value, err := decodeConfig(raw[key], "the value")
		if err != nil {
			errs.Add("/"+pointerEscape(key), "is not valid JSON")
			continue
		}
		if err := sub.Validate(value); err != nil {
			var verr *jsonschema.ValidationError
			if errors.As(err, &verr) {
				nested := &ValidationError{}
				collectViolations(verr, nested)
				errs.Violations = append(errs.Violations, nested.Prefixed("/"+pointerEscape(key)).Violations...)
			}
			continue
		}
		defaults[key] = value
	}
	for _, key := range sortedKeys(own) {
		// One key at a time, so that an error names its key.
		one, _ := json.Marshal(map[string]json.RawMessage{key: own[key]})
		if err := json.Unmarshal(one, settings); err != nil {
			errs.Add("/"+pointerEscape(key), "%s", settingError(err))
		}
	}
	if err := errs.Err(); err != nil {
		return nil, fmt.Errorf("compute.%s: %w", name, err)
	}
	if len(defaults) == 0 {
		return nil, nil
	}
	return json.Marshal(defaults)
}

// jsonFieldNames returns the JSON names of the fields of the struct v points
// to.
func jsonFieldNames(v any) map[string]bool {
	names := map[string]bool{}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return names
	}
	t = t.Elem()
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
		names[name] = true
	}
	return names
}

// settingError words a decoding error of one setting.
func settingError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("must be %s, not a JSON %s", article(goTypeWords(typeErr.Type)), typeErr.Value)
	}
	return err.Error()
}

func goTypeWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}
