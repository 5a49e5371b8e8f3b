// Package violation describes what is wrong with the fields of a JSON
// document: each problem is a JSON pointer (RFC 6901) to the field and a
// message for people. The tenant rules, the compute framework and the HTTP
// API all report invalid input with it, so a problem found anywhere reaches
// the client naming its field.
package violation

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Violation is one problem with one field.
type Violation struct {
	// Pointer is the JSON pointer of the offending value, relative to the
	// checked document ("" is the document itself).
	Pointer string `json:"pointer"`
	// Message says what is wrong in words a person understands.
	Message string `json:"message"`
}

func (v Violation) String() string {
	if v.Pointer == "" {
		return v.Message
	}
	return v.Pointer + ": " + v.Message
}

// List collects the violations found in one document, so that a check can
// report every problem at once.
type List []Violation

// Add records a violation at pointer.
func (l *List) Add(pointer, format string, args ...any) {
	*l = append(*l, Violation{Pointer: pointer, Message: fmt.Sprintf(format, args...)})
}

// Err returns nil when l is empty and otherwise an *Error of kind holding
// l's violations sorted by pointer, each once (two checks may find the same
// problem).
func (l List) Err(kind error) error {
	if len(l) == 0 {
		return nil
	}
	vs := slices.Clone(l)
	slices.SortStableFunc(vs, func(a, b Violation) int { return strings.Compare(a.Pointer, b.Pointer) })
	seen := make(map[Violation]bool, len(vs))
	out := vs[:0]
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return &Error{Kind: kind, Violations: out}
}

// Error reports every violation found in one document. It wraps Kind, the
// domain's sentinel (an invalid tenant, an invalid compute config), which
// decides how callers treat it.
type Error struct {
	Kind       error
	Violations []Violation
}

// New returns an Error of kind with one violation at pointer.
func New(kind error, pointer, format string, args ...any) *Error {
	return &Error{Kind: kind, Violations: []Violation{{Pointer: pointer, Message: fmt.Sprintf(format, args...)}}}
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Kind != nil {
		b.WriteString(e.Kind.Error())
	} else {
		b.WriteString("invalid")
	}
	for i, v := range e.Violations {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(v.String())
	}
	return b.String()
}

// Unwrap returns Kind, so that errors.Is(err, Kind) holds.
func (e *Error) Unwrap() error { return e.Kind }

// Prefixed returns a copy of e with prefix (a JSON pointer) put in front of
// every violation's pointer, for a document nested in a larger one.
func (e *Error) Prefixed(prefix string) *Error {
	out := &Error{Kind: e.Kind, Violations: make([]Violation, len(e.Violations))}
	for i, v := range e.Violations {
		out.Violations[i] = Violation{Pointer: prefix + v.Pointer, Message: v.Message}
	}
	return out
}

// Of returns the violations err carries, or nil when it carries none.
func Of(err error) []Violation {
	var e *Error
	if errors.As(err, &e) {
		return e.Violations
	}
	return nil
}

var escaper = strings.NewReplacer("~", "~0", "/", "~1")

// Escape escapes one reference token of a JSON pointer: "~" becomes "~0"
// and "/" becomes "~1".
func Escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return escaper.Replace(token)
}

var unescaper = strings.NewReplacer("~1", "/", "~0", "~")

// Unescape undoes Escape: "~1" becomes "/" and "~0" becomes "~".
func Unescape(token string) string {
	if !strings.Contains(token, "~") {
		return token
	}
	return unescaper.Replace(token)
}

// Pointer joins reference tokens into a JSON pointer, escaping each.
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(Escape(t))
	}
	return b.String()
}
