package ui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// field is one input, or group of inputs, of a form, as the templates
// render it. Its Pointer is the JSON pointer of its value in the request
// body the form makes (/compute_config/ports/0/container_port), and the
// name of its input: a violation the API reports at a pointer is shown at
// the field of that pointer, or the nearest field above it.
type field struct {
	Pointer  string
	Label    string
	Help     string
	Kind     string // text, password, number, select, lines, map, object, list
	Required bool
	// Value is a single value's text, or a list's lines.
	Value       string
	Placeholder string
	Options     []option
	// Rows are a map's entries; Secret hides their values.
	Rows   []mapRow
	Secret bool
	// Children are an object's fields; Items a list's, each an object or a
	// single value.
	Children []*field
	Items    []*field
	// Index is the position of an item in its list; Removable says it can
	// be removed.
	Index     int
	Removable bool
	Errors    []string
	// Open says a group is shown unfolded: it has a value or an error.
	Open bool
}

type option struct {
	Value, Label string
	Selected     bool
}

// mapRow is one key and value of a map. A secret's value is never shown:
// Placeholder says whether one is set, and that an empty input keeps it.
type mapRow struct {
	Key, Value, Placeholder string
}

// ID is the field's id in the page.
func (f *field) ID() string { return fieldID(f.Pointer) }

func fieldID(pointer string) string {
	var b strings.Builder
	b.WriteString("f")
	for _, c := range pointer {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteRune(c)
		default:
			fmt.Fprintf(&b, ".%x.", c)
		}
	}
	return b.String()
}

// Invalid says the field, or a field within it, has a problem.
func (f *field) Invalid() bool {
	if len(f.Errors) > 0 {
		return true
	}
	for _, c := range slices.Concat(f.Children, f.Items) {
		if c.Invalid() {
			return true
		}
	}
	return false
}

// fields makes the fields of n for value at pointer; defaults are the
// operator's defaults at the same place, shown as placeholders.
func fields(n *node, label, pointer string, required bool, value, defaults any) *field {
	f := &field{Pointer: pointer, Label: label, Required: required, Help: help(n)}
	switch {
	case n.scalar():
		f.Kind = "text"
		f.Value = scalarText(value)
		f.Placeholder = placeholder(n, defaults)
		switch {
		case n.Enum != nil || n.Type == "boolean":
			f.Kind = "select"
			f.Options = options(n, value, f.Placeholder)
		case n.WriteOnly:
			f.Kind = "password"
			f.Value = "" // never sent back to the browser
			if p := secretPlaceholder(value); p != "" {
				f.Placeholder = p
			}
		case n.Type == "integer" || n.Type == "number":
			f.Kind = "number"
		}
	case n.Type == "array" && (n.Items == nil || n.Items.scalar()):
		f.Kind = "lines"
		items, _ := value.([]any)
		lines := make([]string, len(items))
		for i, it := range items {
			lines[i] = scalarText(it)
		}
		f.Value = strings.Join(lines, "\n")
		if d, ok := defaults.([]any); ok && len(d) > 0 {
			f.Placeholder = "default: " + scalarText(d)
		}
		f.Help = strings.TrimSpace("One per line. " + f.Help)
	case n.Type == "array":
		f.Kind = "list"
		items, _ := value.([]any)
		for i, it := range items {
			item := fields(n.Items, fmt.Sprintf("%s %d", singular(label), i+1), fmt.Sprintf("%s/%d", pointer, i), false, it, nil)
			item.Index, item.Removable, item.Open = i, true, true
			f.Items = append(f.Items, item)
		}
		f.Open = len(items) > 0
	case n.Type == "object" && len(n.Properties) == 0 && n.Values != nil:
		f.Kind = "map"
		f.Secret = n.Values.WriteOnly
		if o, ok := value.(object); ok {
			for _, m := range o {
				row := mapRow{Key: m.Key, Value: scalarText(m.Value), Placeholder: "value"}
				if f.Secret {
					row.Value, row.Placeholder = "", cmp.Or(secretPlaceholder(m.Value), "value")
				}
				f.Rows = append(f.Rows, row)
			}
		}
		f.Rows = append(f.Rows, mapRow{Placeholder: "value"}) // room for one more
	default:
		f.Kind = "object"
		o, _ := value.(object)
		d, _ := defaults.(object)
		for _, p := range n.Properties {
			v, _ := o.get(p.Name)
			dv, _ := d.get(p.Name)
			f.Children = append(f.Children, fields(p.node, p.Name, pointer+"/"+violation.Escape(p.Name), p.Required, v, dv))
		}
		f.Open = len(o) > 0 || required
	}
	return f
}

// secretPlaceholder says what an empty secret input keeps: the stored
// secret (the API shows it as "[redacted]"), or one typed before the form
// came back (carried sealed in the page, see secretInputs).
func secretPlaceholder(value any) string {
	switch v, _ := value.(string); {
	case v == client.RedactedValue:
		return "set; leave empty to keep it"
	case v != "":
		return "typed; leave empty to keep what you typed"
	}
	return ""
}

func help(n *node) string {
	h := n.Description
	if len(n.Hints) > 0 {
		h = strings.TrimSpace(h + " (" + strings.Join(n.Hints, ", ") + ")")
	}
	return h
}

// placeholder shows what an empty input gets: the operator's default, else
// the schema's.
func placeholder(n *node, defaults any) string {
	switch {
	case defaults != nil:
		return "default: " + scalarText(defaults)
	case n.Default != nil:
		return "default: " + scalarText(jsonValue(n.Default))
	}
	return ""
}

// jsonValue turns a value decoded with encoding/json's defaults into the
// form's (json.Number for numbers).
func jsonValue(v any) any {
	if f, ok := v.(float64); ok {
		b, _ := json.Marshal(f)
		return json.Number(b)
	}
	return v
}

func options(n *node, value any, placeholder string) []option {
	enum := n.Enum
	if enum == nil {
		enum = []any{true, false}
	}
	cur := scalarText(jsonValue(value))
	empty := "(not set)"
	if placeholder != "" {
		empty = "(" + placeholder + ")"
	}
	out := []option{{Value: "", Label: empty, Selected: value == nil}}
	for _, e := range enum {
		t := scalarText(jsonValue(e))
		out = append(out, option{Value: t, Label: t, Selected: value != nil && t == cur})
	}
	return out
}

func singular(label string) string {
	switch {
	case strings.HasSuffix(label, "ies"):
		return strings.TrimSuffix(label, "ies") + "y"
	case strings.HasSuffix(label, "s"):
		return strings.TrimSuffix(label, "s")
	}
	return label
}

// Suffixes of the inputs of a map's rows.
const (
	keySuffix   = "#key"
	valueSuffix = "#value"
)

// secretInputs say what an empty secret input means: the stored secret
// (kept, by pointer: the secrets the tenant has), or a secret typed before
// the form came back with problems (carried), which the page never holds
// in the clear.
type secretInputs struct {
	kept    map[string]bool
	carried map[string]string
}

// empty is the value of a secret input left empty at pointer; ok is false
// when it means nothing.
func (s *secretInputs) empty(pointer string) (any, bool) {
	if s == nil {
		return nil, false
	}
	if v, ok := s.carried[pointer]; ok {
		return v, true
	}
	if s.kept[pointer] {
		return client.RedactedValue, true // the API keeps the stored secret
	}
	return nil, false
}

// decode reads the value of n at pointer from a submitted form: what was
// typed, as the schema's shape says to send it. It judges nothing: a
// number that is not one is sent as the text typed, for the API to report
// at its pointer. ok is false when nothing was filled in.
func decode(n *node, pointer string, form url.Values, secrets *secretInputs) (v any, ok bool) {
	switch {
	case n.scalar():
		text := form.Get(pointer)
		if !n.WriteOnly {
			text = strings.TrimSpace(text)
		}
		if text == "" {
			if n.WriteOnly {
				return secrets.empty(pointer)
			}
			return nil, false
		}
		return typed(n, text), true
	case n.Type == "array" && (n.Items == nil || n.Items.scalar()):
		var out []any
		for line := range strings.Lines(form.Get(pointer)) {
			if line = strings.TrimSpace(line); line != "" {
				item := any(line)
				if n.Items != nil {
					item = typed(n.Items, line)
				}
				out = append(out, item)
			}
		}
		return out, out != nil
	case n.Type == "array":
		var out []any
		for _, i := range indexes(pointer, form) {
			v, ok := decode(n.Items, pointer+"/"+strconv.Itoa(i), form, secrets)
			if !ok {
				v = emptyLike(n.Items) // an item added and left empty: the API says what it lacks
			}
			out = append(out, v)
		}
		return out, out != nil
	case n.Type == "object" && len(n.Properties) == 0 && n.Values != nil:
		keys, values := form[pointer+keySuffix], form[pointer+valueSuffix]
		o := object{}
		for i, k := range keys {
			k = strings.TrimSpace(k)
			val := ""
			if i < len(values) {
				val = values[i]
			}
			if k == "" && val == "" {
				continue
			}
			var v any = val
			switch {
			case val == "" && n.Values.WriteOnly:
				if s, ok := secrets.empty(pointer + "/" + violation.Escape(k)); ok {
					v = s
				}
			case n.Values.scalar() && val != "":
				v = typed(n.Values, val)
			}
			o = append(o, member{Key: k, Value: v})
		}
		return o, len(o) > 0
	default:
		o := object{}
		for _, p := range n.Properties {
			if v, ok := decode(p.node, pointer+"/"+violation.Escape(p.Name), form, secrets); ok {
				o = append(o, member{Key: p.Name, Value: v})
			}
		}
		return o, len(o) > 0
	}
}

func emptyLike(n *node) any {
	if n.Type == "object" {
		return object{}
	}
	return ""
}

// typed is text as the schema's type would have it, when it reads as one.
func typed(n *node, text string) any {
	var v any
	switch {
	case n.Type == "integer" || n.Type == "number":
		if json.Valid([]byte(text)) {
			if err := json.Unmarshal([]byte(text), &v); err == nil {
				if _, isNum := v.(float64); isNum {
					return json.Number(text)
				}
			}
		}
	case n.Type == "boolean":
		if b, err := strconv.ParseBool(text); err == nil {
			return b
		}
	case n.Type == "" && n.Enum != nil:
		for _, e := range n.Enum {
			if scalarText(jsonValue(e)) == text {
				return jsonValue(e)
			}
		}
	}
	return text
}

// indexes are the item numbers a form has under a list's pointer, in
// order: items removed from the middle leave gaps, which the body closes.
func indexes(pointer string, form url.Values) []int {
	var out []int
	prefix := pointer + "/"
	for k := range form {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		seg, _, _ := strings.Cut(rest, "/")
		seg, _, _ = strings.Cut(seg, "#")
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// place puts each problem at the field of its pointer, or at the nearest
// field above it, with the rest of the pointer said; problems no field
// holds are returned.
func place(root *field, problems []fieldProblem) []fieldProblem {
	byPointer := map[string]*field{}
	var walk func(f *field)
	walk = func(f *field) {
		byPointer[f.Pointer] = f
		for _, c := range slices.Concat(f.Children, f.Items) {
			walk(c)
		}
	}
	walk(root)
	var rest []fieldProblem
	for _, p := range problems {
		ptr := p.Pointer
		for {
			if f, ok := byPointer[ptr]; ok && ptr != root.Pointer {
				msg := p.Message
				if sub := strings.TrimPrefix(p.Pointer, ptr); sub != "" {
					msg = violation.Unescape(strings.TrimPrefix(sub, "/")) + ": " + msg
				}
				f.Errors = append(f.Errors, msg)
				break
			}
			i := strings.LastIndexByte(ptr, '/')
			if i <= 0 {
				rest = append(rest, p)
				break
			}
			ptr = ptr[:i]
		}
	}
	return rest
}

// fieldProblem is a problem the API reported at a pointer.
type fieldProblem struct {
	Pointer, Message string
}

// unrepresentable lists the pointers of the parts of value the form of n
// cannot show, and so would drop on saving: fields the schema does not
// name (extensions), values of another shape, text with line breaks. A
// tenant whose config has any is edited as JSON or YAML instead.
func unrepresentable(n *node, pointer string, value any) []string {
	if value == nil {
		return nil
	}
	bad := []string{pointer}
	switch {
	case n.scalar():
		switch v := value.(type) {
		case object, []any:
			return bad
		case string:
			// An input cannot hold a line break; the form trims spaces
			// and sends nothing for an empty input, where "" may mean
			// something other than the default.
			if !n.WriteOnly && (v == "" || strings.TrimSpace(v) != v || strings.ContainsAny(v, "\r\n")) {
				return bad
			}
		}
	case n.Type == "array" && (n.Items == nil || n.Items.scalar()):
		items, ok := value.([]any)
		if !ok {
			return bad
		}
		for _, it := range items {
			if s, isStr := it.(string); (isStr && (strings.TrimSpace(s) != s || s == "" || strings.ContainsAny(s, "\r\n"))) || isComposite(it) {
				return bad
			}
		}
	case n.Type == "array":
		items, ok := value.([]any)
		if !ok {
			return bad
		}
		var out []string
		for i, it := range items {
			out = append(out, unrepresentable(n.Items, fmt.Sprintf("%s/%d", pointer, i), it)...)
		}
		return out
	case n.Type == "object" && len(n.Properties) == 0 && n.Values != nil:
		o, ok := value.(object)
		if !ok {
			return bad
		}
		for _, m := range o {
			if m.Key == "" || strings.TrimSpace(m.Key) != m.Key || isComposite(m.Value) || strings.ContainsAny(scalarText(m.Value), "\r\n") {
				return []string{pointer + "/" + violation.Escape(m.Key)}
			}
		}
	default:
		o, ok := value.(object)
		if !ok {
			return bad
		}
		var out []string
		for _, m := range o {
			i := slices.IndexFunc(n.Properties, func(p *property) bool { return p.Name == m.Key })
			if i < 0 {
				out = append(out, pointer+"/"+violation.Escape(m.Key))
				continue
			}
			out = append(out, unrepresentable(n.Properties[i].node, pointer+"/"+violation.Escape(m.Key), m.Value)...)
		}
		return out
	}
	return nil
}

func isComposite(v any) bool {
	switch v.(type) {
	case object, []any:
		return true
	}
	return false
}

// typedSecrets collects the secrets of value, by pointer, that were typed
// rather than kept: the page carries them sealed when the form comes back.
func typedSecrets(n *node, pointer string, value any, out map[string]string) {
	switch {
	case n.scalar():
		if v, ok := value.(string); ok && n.WriteOnly && v != "" && v != client.RedactedValue {
			out[pointer] = v
		}
	case n.Type == "array" && n.Items != nil && !n.Items.scalar():
		items, _ := value.([]any)
		for i, it := range items {
			typedSecrets(n.Items, fmt.Sprintf("%s/%d", pointer, i), it, out)
		}
	case n.Type == "object" && len(n.Properties) == 0 && n.Values != nil:
		o, _ := value.(object)
		for _, m := range o {
			typedSecrets(n.Values, pointer+"/"+violation.Escape(m.Key), m.Value, out)
		}
	case n.Type == "object":
		o, _ := value.(object)
		for _, p := range n.Properties {
			if v, ok := o.get(p.Name); ok {
				typedSecrets(p.node, pointer+"/"+violation.Escape(p.Name), v, out)
			}
		}
	}
}
