package tenant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

var (
	nameRule       = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	labelKeyRule   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValueRule = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
)

// Limits on what a tenant may hold.
const (
	MaxLabels          = 64
	MaxAnnotationBytes = 256 << 10
	MaxConfigBytes     = 1 << 20
)

// NewID returns a new time-ordered tenant id (UUID version 7).
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// IsID reports whether s has the form of a tenant id (a UUID). Names never
// do, so "id or name" lookups are never ambiguous. The form is wire's, which
// clients check without the server; the stores and the API use this name.
func IsID(s string) bool { return wire.IsID(s) }

// ValidateName checks the name rules: a lowercase DNS label of at most 63
// characters that does not read as a UUID.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: name is required", ErrInvalid)
	case !nameRule.MatchString(name):
		return fmt.Errorf("%w: name %s must be a lowercase DNS label: 1 to 63 of a-z, 0-9 and -, starting and ending with a letter or digit", ErrInvalid, wire.Quote(name))
	case IsID(name):
		return fmt.Errorf("%w: name %q reads as a tenant id; choose a name that is not a UUID", ErrInvalid, name)
	}
	return nil
}

// Validate checks every rule a stored tenant's desired state must keep and
// reports all problems at once, each with the JSON pointer of its field.
func Validate(t *Tenant) error {
	var errs violation.List
	if !IsID(t.ID) {
		errs.Add("/id", "%s is not a tenant id (a UUID)", wire.Quote(t.ID))
	}
	if err := ValidateName(t.Name); err != nil {
		errs.Add("/name", "%s", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
	}
	validatePlacements(t, &errs)
	validateLabels("/labels", t.Labels, true, &errs)
	validateLabels("/annotations", t.Annotations, false, &errs)
	validatePlan(t.Plan, &errs)
	if t.Plan != nil {
		// A plan is for one provider: every placement of a tenant that
		// follows one runs on it (the stores check the first's).
		for i, p := range t.Placements {
			if p.Provider != t.Placements[0].Provider && !p.Removed {
				errs.Add(fmt.Sprintf("/placements/%d/compute_provider", i), "is %s: a tenant that follows plan %s has every placement on the plan's provider (%s)",
					p.Provider, t.Plan.Name, t.Placements[0].Provider)
			}
		}
	}
	validateWindow(t.MaintenanceWindow, &errs)
	return errs.Err(ErrInvalid)
}

// ValidateLabels checks labels and annotations as Validate does, so that a
// request can report them with its other problems before a tenant is made.
func ValidateLabels(labels, annotations map[string]string) error {
	var errs violation.List
	validateLabels("/labels", labels, true, &errs)
	validateLabels("/annotations", annotations, false, &errs)
	return errs.Err(ErrInvalid)
}

// validateConfig checks a compute_config by scanning its text: it is
// decoded only to name the field of a rare problem. The API has already
// decoded and validated it against its provider's schema.
func validateConfig(raw json.RawMessage, at string, errs *violation.List) {
	if len(raw) > MaxConfigBytes {
		errs.Add(at, "is %d bytes; the limit is %d", len(raw), MaxConfigBytes)
		return
	}
	if !utf8.Valid(raw) {
		errs.Add(at, "is not valid UTF-8")
		return
	}
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		errs.Add(at, "is not valid JSON: %v", err)
		return
	}
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		errs.Add(at, "must be a JSON object")
		return
	}
	// PostgreSQL cannot store U+0000 in text or JSON; refuse it everywhere
	// so that both stores behave the same.
	if nul := jsonscan.NULAt(raw, at); nul != "" {
		errs.Add(nul, "must not contain the character U+0000")
	}
}

// validateLabels checks keys (Kubernetes label key rules) and, for labels,
// values (at most 63 characters of letters, digits, -, _ and .).
func validateLabels(at string, m map[string]string, strictValues bool, errs *violation.List) {
	if strictValues && len(m) > MaxLabels {
		errs.Add(at, "has %d labels; the limit is %d", len(m), MaxLabels)
	}
	size := 0
	for k, v := range m {
		ptr := at + "/" + violation.Escape(k)
		size += len(k) + len(v)
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			errs.Add(ptr, "is not valid UTF-8")
			continue
		}
		if !labelKeyRule.MatchString(k) {
			errs.Add(ptr, "key must be a name of letters, digits, -, _ and . (at most 63), optionally prefixed by a DNS subdomain and /")
		}
		if strictValues && !labelValueRule.MatchString(v) {
			errs.Add(ptr, "value must be at most 63 letters, digits, -, _ and ., starting and ending with a letter or digit")
		}
		if !strictValues && strings.ContainsRune(v, 0) {
			errs.Add(ptr, "must not contain the character U+0000")
		}
	}
	if !strictValues && size > MaxAnnotationBytes {
		errs.Add(at, "hold %d bytes; the limit is %d", size, MaxAnnotationBytes)
	}
}

// ValidateSelector checks a label selector given as a map, as List takes it.
func ValidateSelector(sel map[string]string) error {
	var errs violation.List
	for k, v := range sel {
		if !labelKeyRule.MatchString(k) || !labelValueRule.MatchString(v) {
			errs.Add("/label/"+violation.Escape(k), "%s is not a label selector of the form key=value", wire.Quote(k+"="+v))
		}
	}
	return errs.Err(ErrInvalid)
}

// ValidateEvent checks an event before it is stored.
func ValidateEvent(e Event) error {
	var errs violation.List
	switch e.Type {
	case EventCreated, EventUpdated, EventDeleteRequested, EventStatus, EventAttempt, EventDrift, EventPaused, EventResumed, EventNote, EventForgotten:
	default:
		errs.Add("/type", "%q is not an event type", e.Type)
	}
	for at, s := range map[string]Status{"/from": e.From, "/to": e.To} {
		if s != "" && !s.Valid() {
			errs.Add(at, "%q is not a tenant status", s)
		}
	}
	if strings.ContainsRune(e.Message, 0) || strings.ContainsRune(e.Actor, 0) {
		errs.Add("/message", "must not contain the character U+0000")
	}
	return errs.Err(ErrInvalid)
}

// ParseSelector reads label selector terms of the form key=value; all terms
// must match.
func ParseSelector(terms []string) (map[string]string, error) {
	sel := map[string]string{}
	var errs violation.List
	for i, term := range terms {
		k, v, ok := strings.Cut(term, "=")
		if !ok || !labelKeyRule.MatchString(k) || !labelValueRule.MatchString(v) {
			errs.Add(fmt.Sprintf("/label/%d", i), "%s is not a label selector of the form key=value", wire.Quote(term))
			continue
		}
		sel[k] = v
	}
	if err := errs.Err(ErrInvalid); err != nil {
		return nil, err
	}
	return sel, nil
}
