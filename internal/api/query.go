package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// checkParameters refuses a path parameter whose value is not UTF-8
// (%ff), then what checkQuery refuses: the rule checkBody applies to a
// body's strings, for the values of the URL.
func checkParameters(r *http.Request, rt route) error {
	for _, name := range pathNames(rt.pattern) {
		if notText(r.PathValue(name)) {
			return notUTF8(name)
		}
	}
	return checkQuery(r, rt)
}

// pathNames are the names of a route pattern's wildcards.
func pathNames(pattern string) []string {
	var out []string
	for seg := range strings.SplitSeq(pattern, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			out = append(out, strings.TrimSuffix(strings.TrimSuffix(name, "}"), "..."))
		}
	}
	return out
}

func notText(s string) bool { return !utf8.ValidString(s) }

// notUTF8 is the problem of a parameter whose value is not UTF-8.
func notUTF8(parameter string) error {
	return problem(http.StatusBadRequest, wire.CodeInvalidParameter, parameter+" is not UTF-8 text; send it as UTF-8, percent-encoded",
		wire.FieldError{Parameter: parameter, Message: "is not valid UTF-8"})
}

// checkQuery refuses a query string that does not parse, query parameters
// the operation does not read (a misspelt filter would otherwise be
// ignored, and its answer taken for the filtered one) and values of those
// it reads that are not UTF-8.
func checkQuery(r *http.Request, rt route) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return problem(http.StatusBadRequest, wire.CodeInvalidParameter, "the query string is malformed: "+err.Error())
	}
	known := rt.query
	for _, name := range known {
		if slices.ContainsFunc(q[name], notText) {
			return notUTF8(name)
		}
	}
	var unknown []string
	for name := range q {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	takes := "it takes no query parameters"
	if len(known) > 0 {
		takes = "it takes " + strings.Join(known, ", ")
	}
	errs := make([]wire.FieldError, len(unknown))
	for i, name := range unknown {
		errs[i] = wire.FieldError{Parameter: name, Message: "unknown query parameter; " + takes}
	}
	what := "an unknown query parameter"
	if len(unknown) > 1 {
		what = fmt.Sprintf("%d unknown query parameters", len(unknown))
	}
	// The detail names a few, each cut short: errors lists them (capped).
	named := make([]string, 0, min(len(unknown), 5))
	for _, name := range unknown[:min(len(unknown), 5)] {
		named = append(named, wire.Quote(name))
	}
	if len(unknown) > len(named) {
		named = append(named, fmt.Sprintf("and %d more", len(unknown)-len(named)))
	}
	return problem(http.StatusBadRequest, wire.CodeInvalidParameter,
		fmt.Sprintf("%s %s has %s (%s); %s", rt.method, rt.pattern, what, strings.Join(named, ", "), takes), errs...)
}
