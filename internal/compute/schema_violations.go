package compute

import (
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/jaxxstorm/landlord/sdk/violation"
)

var printer = message.NewPrinter(language.English)

// collectViolations flattens the library's error tree into one violation per
// leaf, worded for people and pointing at the field itself.
func collectViolations(e *jsonschema.ValidationError, out *violation.List) {
	at := violation.Pointer(e.InstanceLocation...)
	if k, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		// The causes describe the name, not a value. jsonschema v6.0.3 does
		// not copy the instance location of this error (validator.go, the
		// propertyNames branch), so it may name the wrong object; the message
		// names the key. Shared schemas check names in Go instead.
		var why []string
		for _, leaf := range leaves(e) {
			why = append(why, leaf.ErrorKind.LocalizedString(printer))
		}
		out.Add(at, "key %q is not an allowed name: %s", k.Property, strings.Join(why, "; "))
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectViolations(c, out)
		}
		return
	}
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			out.Add(at+"/"+violation.Escape(p), "unknown field (extensions must start with \"x-\")")
		}
	case *kind.Required:
		for _, p := range k.Missing {
			out.Add(at+"/"+violation.Escape(p), "is required")
		}
	case *kind.Type:
		out.Add(at, "must be %s, not %s", typeWords(k.Want), article(k.Got))
	case *kind.FalseSchema:
		out.Add(at, "is not allowed here")
	// The library's wording of these quotes the value, which may be a
	// secret; ours does not.
	case *kind.Pattern:
		out.Add(at, "does not match the pattern %s", k.Want)
	case *kind.Format:
		out.Add(at, "is not a valid %s", k.Want)
	case *kind.Const:
		out.Add(at, "is not the one allowed value")
	case *kind.Minimum:
		out.Add(at, "must be at least %s", k.Want.RatString())
	case *kind.Maximum:
		out.Add(at, "must be at most %s", k.Want.RatString())
	case *kind.ExclusiveMinimum:
		out.Add(at, "must be more than %s", k.Want.RatString())
	case *kind.ExclusiveMaximum:
		out.Add(at, "must be less than %s", k.Want.RatString())
	case *kind.MultipleOf:
		out.Add(at, "must be a multiple of %s", k.Want.RatString())
	default:
		out.Add(at, "%s", e.ErrorKind.LocalizedString(printer))
	}
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func typeWords(want []string) string {
	words := make([]string, len(want))
	for i, w := range want {
		words[i] = article(w)
	}
	return strings.Join(words, " or ")
}

func article(typ string) string {
	switch typ {
	case "object", "array", "integer":
		return "an " + typ
	case "null":
		return "null"
	default:
		return "a " + typ
	}
}
