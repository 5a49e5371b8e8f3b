package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// now is the clock of ages; tests set it.
var now = time.Now

// printObject writes v, an API object, as indented JSON or as YAML.
func printObject(w io.Writer, format string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == "json" {
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	y, err := jsonToYAML(b)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}

// jsonToYAML converts JSON to block-style YAML, keeping the order of keys.
func jsonToYAML(b []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("convert to YAML: %w", err)
	}
	var plain func(n *yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style = 0 // block style; strings quoted only when they must be
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && yaml11Bools[n.Value] {
			// YAML 1.1 readers take these for booleans.
			n.Style = yaml.DoubleQuotedStyle
		}
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&doc)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("convert to YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("convert to YAML: %w", err)
	}
	return out.Bytes(), nil
}

// yaml11Bools are the strings YAML 1.1 readers take for booleans.
var yaml11Bools = func() map[string]bool {
	out := map[string]bool{}
	for _, s := range []string{"y", "yes", "n", "no", "on", "off"} {
		out[s], out[strings.ToUpper(s)], out[strings.ToUpper(s[:1])+s[1:]] = true, true, true
	}
	return out
}()

// indentedYAML is a JSON value as YAML, each line indented; "" for null or
// nothing.
func indentedYAML(raw json.RawMessage, indent string) string {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return ""
	}
	y, err := jsonToYAML(raw)
	if err != nil {
		return indent + string(raw) + "\n"
	}
	var b strings.Builder
	for line := range strings.Lines(string(y)) {
		b.WriteString(indent + line)
	}
	return b.String()
}

// age is a duration in its largest whole unit: 5s, 3m, 2h, 4d.
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// when is a time as the tables show it: UTC, and how long before at.
func when(t, at time.Time) string {
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), age(at.Sub(t)))
}

// by is " by who", or "" for no one.
func by(who string) string {
	if who == "" {
		return ""
	}
	return " by " + who
}
