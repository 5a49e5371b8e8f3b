package config

import (
	"cmp"
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Errors a configuration file's keys and values are reported with.
var (
	// ErrUnknownKey: the file has a key that no setting has.
	ErrUnknownKey = errors.New("unknown key")
	// ErrBadValue: a key's value is of a kind or type the setting cannot
	// take.
	ErrBadValue = errors.New("bad value")
)

// KeyError is one problem with one key of a configuration file, where it
// is.
type KeyError struct {
	// File is the file's path, Line its 1-based line.
	File string
	Line int
	// Key is the key's path from the top, such as "controller.workers".
	Key string
	// Kind is ErrUnknownKey or ErrBadValue; Msg says what is wrong.
	Kind error
	Msg  string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("config %s, line %d: %s: %s", e.File, e.Line, e.Key, e.Msg)
}

// Unwrap makes errors.Is(err, e.Kind) hold.
func (e *KeyError) Unwrap() error { return e.Kind }

// checkKeys holds the YAML document doc, read from file, to the settings of
// Config, by their yaml tags: it reports every key no setting has, with
// the nearest one there is, and every value whose kind (mapping, list,
// scalar) or type its setting cannot take, each at its line and in words
// of the file, not of Go. The blocks of compute.<provider> are left to the
// providers, which check their own keys.
func checkKeys(file string, doc *yaml.Node) error {
	w := keyWalker{file: file}
	if len(doc.Content) > 0 {
		w.walk(doc.Content[0], reflect.TypeFor[Config](), "")
	}
	return errors.Join(w.errs...)
}

// keyWalker walks a yaml.Node tree beside a Go type.
type keyWalker struct {
	file string
	errs []error
}

var (
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (w *keyWalker) fail(n *yaml.Node, key string, kind error, format string, args ...any) {
	w.errs = append(w.errs, &KeyError{File: w.file, Line: n.Line, Key: cmp.Or(key, "the file"), Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// walk checks node n, at key, against the type t.
func (w *keyWalker) walk(n *yaml.Node, t reflect.Type, key string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // the setting keeps its default
	}
	if reflect.PointerTo(t).Implements(yamlUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		w.decode(n, t, key)
		return
	}
	switch t.Kind() {
	case reflect.Interface:
		return // anything goes: a provider's block, checked by the provider
	case reflect.Struct:
		if !w.want(n, yaml.MappingNode, key) {
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if w.merged(k, v, t, key) {
				continue
			}
			f, ok := fields[k.Value]
			if !ok {
				w.unknown(k, key, fields)
				continue
			}
			w.walk(v, f.Type, join(key, k.Value))
		}
	case reflect.Map:
		if !w.want(n, yaml.MappingNode, key) {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if w.merged(n.Content[i], n.Content[i+1], t, key) {
				continue
			}
			w.walk(n.Content[i+1], t.Elem(), join(key, n.Content[i].Value))
		}
	case reflect.Slice, reflect.Array:
		if !w.want(n, yaml.SequenceNode, key) {
			return
		}
		for i, v := range n.Content {
			w.walk(v, t.Elem(), key+"["+strconv.Itoa(i)+"]")
		}
	default:
		if w.want(n, yaml.ScalarNode, key) {
			w.decode(n, t, key)
		}
	}
}

// merged reports whether k is a merge key (<<), and if so walks the
// mapping or mappings v merges into the mapping at key, of type t, as part
// of it.
func (w *keyWalker) merged(k, v *yaml.Node, t reflect.Type, key string) bool {
	if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!merge" {
		return false
	}
	for v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			w.walk(m, t, key)
		}
		return true
	}
	w.walk(v, t, key)
	return true
}

// want reports whether n is of kind, and reports it when it is not.
func (w *keyWalker) want(n *yaml.Node, kind yaml.Kind, key string) bool {
	if n.Kind == kind {
		return true
	}
	w.fail(n, key, ErrBadValue, "must be %s, not %s", kindName(kind), kindName(n.Kind))
	return false
}

// decode checks that the scalar n decodes into a value of type t.
func (w *keyWalker) decode(n *yaml.Node, t reflect.Type, key string) {
	err := n.Decode(reflect.New(t).Interface())
	if err == nil {
		return
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		// yaml's words name Go types: say what the setting takes instead.
		w.fail(n, key, ErrBadValue, "%s is not %s", strconv.Quote(n.Value), typeName(t))
		return
	}
	w.fail(n, key, ErrBadValue, "%v", err)
}

// unknown reports the key k, under parent, that none of fields has, with
// the nearest that exists.
func (w *keyWalker) unknown(k *yaml.Node, parent string, fields map[string]reflect.StructField) {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(distance(k.Value, a), distance(k.Value, b)), strings.Compare(a, b))
	})
	if len(names) > 0 && distance(k.Value, names[0]) <= max(2, len(k.Value)/3) {
		w.fail(k, join(parent, k.Value), ErrUnknownKey, "unknown key; did you mean %s?", join(parent, names[0]))
		return
	}
	where := "the top-level keys"
	if parent != "" {
		where = "the keys of " + parent
	}
	w.fail(k, join(parent, k.Value), ErrUnknownKey, "unknown key; %s are, nearest first: %s", where, strings.Join(names, ", "))
}

// yamlFields are the fields of struct type t by the key yaml decodes them
// from: the tag's name, else the field's name in lower case; the fields of
// an inlined struct count as t's own.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "inline") && f.Type.Kind() == reflect.Struct {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "a mapping of keys"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a single value"
	}
	return "a value"
}

// typeName says what values of t are, in the words of a configuration
// file.
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number from 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "text"
}

// distance is the Levenshtein distance between a and b, in bytes (keys are
// ASCII).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
