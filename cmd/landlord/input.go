package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// maxConfigBytes bounds a --config value; the API refuses bodies over 1 MiB
// anyway.
const maxConfigBytes = 1 << 20

// inputError is a --config value that cannot be read, with where.
type inputError struct {
	source       string // "--config", "--config @app.yaml", "--config - (stdin)"
	line, column int    // 1-based; 0 when unknown
	msg          string
}

func (e *inputError) Error() string {
	switch {
	case e.line > 0 && e.column > 0:
		return fmt.Sprintf("%s: line %d, column %d: %s", e.source, e.line, e.column, e.msg)
	case e.line > 0:
		return fmt.Sprintf("%s: line %d: %s", e.source, e.line, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.source, e.msg)
}

// readConfig reads a --config value: inline JSON or YAML, @path or
// file://path (a JSON or YAML file), or - (stdin). YAML is converted to
// JSON, keeping the order of keys. The result is a compact JSON object.
func readConfig(value string, stdin io.Reader) (json.RawMessage, error) {
	return readConfigOf("--config", "", value, stdin)
}

// readConfigOf reads the config value of flag as readConfig does; name,
// when not empty, is what the value is of (a placement's name, given as
// NAME=VALUE), and errors name it so: "--placement web=@web.yaml".
func readConfigOf(flag, name, value string, stdin io.Reader) (json.RawMessage, error) {
	var (
		data   []byte
		source = flag
		err    error
	)
	at := func(what string) string {
		if name != "" {
			return flag + " " + name + "=" + what
		}
		return flag + " " + what
	}
	if name != "" {
		source = flag + " " + name
	}
	switch {
	case value == "-":
		source = at("- (stdin)")
		data, err = readLimited(stdin)
	case strings.HasPrefix(value, "@") || strings.HasPrefix(value, "file://"):
		path := strings.TrimPrefix(strings.TrimPrefix(value, "@"), "file://")
		source = at(path) // --config app.yaml
		if name != "" {
			source = at(value) // --placement web=@app.yaml, as typed
		}
		if path == "" {
			return nil, &inputError{source: at(value), msg: "names no file"}
		}
		var f *os.File
		if f, err = os.Open(path); err == nil {
			data, err = readLimited(f)
			f.Close()
		}
	default:
		data = []byte(value)
	}
	if err != nil {
		return nil, &inputError{source: source, msg: err.Error()}
	}
	out, err := parseConfig(data)
	var ie *inputError
	if errors.As(err, &ie) {
		ie.source = source
		if ie.line == 0 && value != "-" && !strings.HasPrefix(value, "@") && fileExists(value) {
			fix := "@" + value
			if name != "" {
				fix = name + "=" + fix
			}
			ie.msg += fmt.Sprintf("; to read the file %s, write %s", value, fix)
		}
	}
	return out, err
}

func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxConfigBytes+1))
	if err == nil && len(data) > maxConfigBytes {
		err = fmt.Errorf("is larger than %d bytes", maxConfigBytes)
	}
	return data, err
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// parseConfig reads JSON, or else YAML, into a compact JSON object.
func parseConfig(data []byte) (json.RawMessage, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &inputError{msg: "is empty; give a JSON or YAML object such as {\"image\": \"nginx:latest\"}"}
	}
	if !utf8.Valid(data) {
		return nil, &inputError{msg: "is not UTF-8 text"}
	}
	var out bytes.Buffer
	if json.Valid(data) {
		_ = json.Compact(&out, data)
	} else {
		var doc yaml.Node
		if yerr := yaml.Unmarshal(data, &doc); yerr != nil {
			if looksJSON(data) {
				return nil, jsonError(data)
			}
			return nil, yamlError(data, yerr)
		}
		if len(doc.Content) == 0 {
			return nil, &inputError{msg: "is empty; give a JSON or YAML object such as {\"image\": \"nginx:latest\"}"}
		}
		if err := yamlToJSON(&out, doc.Content[0], 0); err != nil {
			return nil, err
		}
	}
	if out.Bytes()[0] != '{' {
		return nil, &inputError{msg: fmt.Sprintf("is %s, not an object of compute settings such as {\"image\": \"nginx:latest\"}", jsonKind(out.Bytes()))}
	}
	return out.Bytes(), nil
}

// looksJSON tells JSON gone wrong from YAML flow style: a JSON object's
// first key is quoted.
func looksJSON(data []byte) bool {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || d[0] != '{' {
		return len(d) > 0 && d[0] == '['
	}
	rest := bytes.TrimSpace(d[1:])
	return len(rest) == 0 || rest[0] == '"' || rest[0] == '}'
}

func jsonKind(v []byte) string {
	switch v[0] {
	case '"':
		return "a string"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonError is the JSON syntax error of data, with its line and column.
func jsonError(data []byte) error {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return &inputError{msg: fmt.Sprint("is not valid JSON: ", err)}
	}
	line, col := position(data, int(se.Offset))
	if se.Offset >= int64(len(data)) {
		line, col = position(data, len(data)+1) // just past the end
	}
	return &inputError{line: line, column: col, msg: "JSON: " + se.Error()}
}

// position is the 1-based line and column (in characters) of the byte at
// offset, or just past the end; the JSON decoder's offsets point one past
// the offending byte.
func position(data []byte, offset int) (line, col int) {
	offset = min(max(offset-1, 0), len(data))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// yamlError is the YAML syntax error err of data, with its line and column.
// The YAML library reports only a line, sometimes the line where the
// enclosing block starts, so the position is found by reading prefixes of
// the value: it is just past the longest prefix that does not fail with the
// same problem (searched by lines, then by characters).
func yamlError(data []byte, err error) error {
	msg := err.Error()
	problem := yamlLine.ReplaceAllString(msg, "")
	e := &inputError{msg: "YAML: " + problem}
	if m := yamlLine.FindStringSubmatch(msg); m != nil && m[1] != "" {
		e.line, _ = strconv.Atoi(m[1])
	}
	if len(data) > 64<<10 {
		return e // too long to search; the library's line will do
	}
	ok := func(n int) bool {
		var doc yaml.Node
		err := yaml.Unmarshal(data[:n], &doc)
		return err == nil || yamlLine.ReplaceAllString(err.Error(), "") != problem
	}
	// ends are the offsets just past each line.
	ends := []int{0}
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	line := len(ends) - 2
	for line > 0 && !ok(ends[line]) {
		line--
	}
	for n := ends[line+1] - 1; n >= ends[line]; n-- {
		if utf8.RuneStart(data[n]) && ok(n) {
			e.line, e.column = position(data, n+1)
			return e
		}
	}
	return e
}

var jsonNumber = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$`)

// yamlToJSON writes the YAML node n as JSON; errors name the node's line
// and column.
func yamlToJSON(out *bytes.Buffer, n *yaml.Node, depth int) error {
	at := func(format string, args ...any) error { return nodeError(n, format, args...) }
	if depth > 64 {
		return at("nested too deeply (an alias that contains itself?)")
	}
	if out.Len() > maxConfigBytes {
		return at("is larger than %d bytes as JSON", maxConfigBytes)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return yamlToJSON(out, n.Alias, depth+1)
	case yaml.DocumentNode:
		return at("holds several documents; give one")
	case yaml.MappingNode:
		out.WriteByte('{')
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return nodeError(k, "a key must be a string, not a list or mapping")
			}
			if k.ShortTag() == "!!merge" {
				return nodeError(k, "merge keys (<<) are not supported; write the keys out")
			}
			if first, ok := seen[k.Value]; ok {
				return nodeError(k, "key %q is repeated (first at line %d)", k.Value, first.Line)
			}
			seen[k.Value] = k
			if i > 0 {
				out.WriteByte(',')
			}
			key, _ := json.Marshal(k.Value)
			out.Write(key)
			out.WriteByte(':')
			if err := yamlToJSON(out, v, depth+1); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	case yaml.SequenceNode:
		out.WriteByte('[')
		for i, v := range n.Content {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := yamlToJSON(out, v, depth+1); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			out.WriteString("null")
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return at("%v", err)
			}
			out.WriteString(strconv.FormatBool(b))
		case "!!int", "!!float":
			if jsonNumber.MatchString(n.Value) {
				out.WriteString(n.Value)
				break
			}
			var v any
			if err := n.Decode(&v); err != nil {
				return at("%v", err)
			}
			if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
				return at("%s is not a number JSON can hold", n.Value)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return at("%s: %v", n.Value, err)
			}
			out.Write(b)
		default: // strings, and timestamps and the like as written
			b, _ := json.Marshal(n.Value)
			out.Write(b)
		}
	default:
		return at("cannot be converted to JSON")
	}
	return nil
}

// nodeError is a problem with a YAML node, at its line and column.
func nodeError(n *yaml.Node, format string, args ...any) error {
	return &inputError{line: n.Line, column: n.Column, msg: "YAML: " + fmt.Sprintf(format, args...)}
}

// desiredFlags are the flags of a tenant's desired state: --config, --label
// and --annotation.
type desiredFlags struct {
	config              string
	labels, annotations []string
}

// addDesiredFlags adds them to cmd; with replaces, the help says that labels
// and annotations given replace the tenant's.
func addDesiredFlags(cmd *cobra.Command, replaces bool) *desiredFlags {
	f := &desiredFlags{}
	labelNote, annotationNote := "", ""
	if replaces {
		labelNote, annotationNote = "; replaces all labels", "; replaces all annotations"
	}
	fs := cmd.Flags()
	fs.StringVar(&f.config, "config", "", "the compute_config: inline JSON or YAML, @path, file://path or - (stdin)")
	fs.StringArrayVar(&f.labels, "label", nil, "a label key=value (repeatable)"+labelNote)
	fs.StringArrayVar(&f.annotations, "annotation", nil, "an annotation key=value (repeatable)"+annotationNote)
	_ = cmd.MarkFlagFilename("config", "json", "yaml", "yml")
	return f
}

// read returns the compute_config, with compute_provider set to provider
// unless it is empty (see withProvider), the labels and the annotations.
// Without --config, config is nil; with a provider, it is {} then.
func (f *desiredFlags) read(cmd *cobra.Command, provider string) (config json.RawMessage, labels, annotations map[string]string, err error) {
	if cmd.Flags().Changed("config") {
		if config, err = readConfig(f.config, cmd.InOrStdin()); err != nil {
			return nil, nil, nil, withExitCode(exitFailure, err)
		}
	} else if provider != "" {
		config = json.RawMessage("{}")
	}
	if config, err = withProvider(config, provider); err != nil {
		return nil, nil, nil, err
	}
	if labels, err = parsePairs("label", f.labels); err != nil {
		return nil, nil, nil, err
	}
	if annotations, err = parsePairs("annotation", f.annotations); err != nil {
		return nil, nil, nil, err
	}
	return config, labels, annotations, nil
}
