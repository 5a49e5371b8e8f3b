package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/jaxxstorm/landlord/internal/violation"
)

// queryNames are the query parameters an operation reads: those its notes
// give, which the OpenAPI document lists too.
func queryNames(operation string) []string {
	var out []string
	for _, p := range operationNotes[operation].params {
		if p.param.In == openapi3.ParameterInQuery {
			out = append(out, p.param.Name)
		}
	}
	return out
}

// checkQuery refuses a query string that does not parse, and query
// parameters the operation does not read: a misspelt filter would
// otherwise be ignored, and its answer taken for the filtered one.
func checkQuery(r *http.Request, rt route) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return problem(http.StatusBadRequest, CodeInvalidParameter, "the query string is malformed: "+err.Error())
	}
	known := rt.query
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
	errs := make([]FieldError, len(unknown))
	for i, name := range unknown {
		errs[i] = FieldError{Parameter: name, Message: "unknown query parameter; " + takes}
	}
	what := "an unknown query parameter"
	if len(unknown) > 1 {
		what = fmt.Sprintf("%d unknown query parameters", len(unknown))
	}
	// The detail names a few, each cut short: errors lists them (capped).
	named := make([]string, 0, min(len(unknown), 5))
	for _, name := range unknown[:min(len(unknown), 5)] {
		named = append(named, violation.Quote(name))
	}
	if len(unknown) > len(named) {
		named = append(named, fmt.Sprintf("and %d more", len(unknown)-len(named)))
	}
	return problem(http.StatusBadRequest, CodeInvalidParameter,
		fmt.Sprintf("%s %s has %s (%s); %s", rt.method, rt.pattern, what, strings.Join(named, ", "), takes), errs...)
}
