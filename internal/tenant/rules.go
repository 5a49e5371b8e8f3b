package tenant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/jaxxstorm/landlord/internal/compute"
)

var (
	nameRule       = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	labelKeyRule   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValueRule = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
)

// pointerToken escapes a key for use in a JSON pointer (RFC 6901).
var pointerToken = strings.NewReplacer("~", "~0", "/", "~1")

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
// do, so "id or name" lookups are never ambiguous.
func IsID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// ValidateName checks the name rules: a lowercase DNS label of at most 63
// characters that does not read as a UUID.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: name is required", ErrInvalid)
	case !nameRule.MatchString(name):
		return fmt.Errorf("%w: name %q must be a lowercase DNS label: 1 to 63 of a-z, 0-9 and -, starting and ending with a letter or digit", ErrInvalid, name)
	case IsID(name):
		return fmt.Errorf("%w: name %q reads as a tenant id; choose a name that is not a UUID", ErrInvalid, name)
	}
	return nil
}

// Validate checks every rule a stored tenant's desired state must keep and
// reports all problems at once, each with the JSON pointer of its field.
func Validate(t *Tenant) error {
	errs := &compute.ValidationError{}
	if !IsID(t.ID) {
		errs.Add("/id", "%q is not a tenant id (a UUID)", t.ID)
	}
	if err := ValidateName(t.Name); err != nil {
		errs.Add("/name", "%s", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
	}
	if t.Provider == "" {
		errs.Add("/provider", "is required")
	}
	validateConfig(t.ComputeConfig, errs)
	validateLabels("/labels", t.Labels, true, errs)
	validateLabels("/annotations", t.Annotations, false, errs)
	if err := errs.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

func validateConfig(raw json.RawMessage, errs *compute.ValidationError) {
	if len(raw) > MaxConfigBytes {
		errs.Add("/compute_config", "is %d bytes; the limit is %d", len(raw), MaxConfigBytes)
		return
	}
	if !utf8.Valid(raw) {
		errs.Add("/compute_config", "is not valid UTF-8")
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		errs.Add("/compute_config", "is not valid JSON: %v", err)
		return
	}
	if _, ok := v.(map[string]any); !ok {
		errs.Add("/compute_config", "must be a JSON object")
		return
	}
	// PostgreSQL cannot store U+0000 in text or JSON; refuse it everywhere
	// so that both stores behave the same.
	if at := findNUL(v, "/compute_config"); at != "" {
		errs.Add(at, "must not contain the character U+0000")
	}
}

func findNUL(v any, at string) string {
	switch v := v.(type) {
	case string:
		if strings.ContainsRune(v, 0) {
			return at
		}
	case map[string]any:
		for k, child := range v {
			if strings.ContainsRune(k, 0) {
				return at
			}
			if p := findNUL(child, at+"/"+pointerToken.Replace(k)); p != "" {
				return p
			}
		}
	case []any:
		for i, child := range v {
			if p := findNUL(child, fmt.Sprintf("%s/%d", at, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// validateLabels checks keys (Kubernetes label key rules) and, for labels,
// values (at most 63 characters of letters, digits, -, _ and .).
func validateLabels(at string, m map[string]string, strictValues bool, errs *compute.ValidationError) {
	if strictValues && len(m) > MaxLabels {
		errs.Add(at, "has %d labels; the limit is %d", len(m), MaxLabels)
	}
	size := 0
	for k, v := range m {
		ptr := at + "/" + pointerToken.Replace(k)
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
	errs := &compute.ValidationError{}
	for k, v := range sel {
		if !labelKeyRule.MatchString(k) || !labelValueRule.MatchString(v) {
			errs.Add("/label/"+pointerToken.Replace(k), "%q is not a label selector of the form key=value", k+"="+v)
		}
	}
	if err := errs.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// ValidateEvent checks an event before it is stored.
func ValidateEvent(e Event) error {
	errs := &compute.ValidationError{}
	switch e.Type {
	case EventCreated, EventUpdated, EventDeleteRequested, EventStatus, EventAttempt, EventDrift, EventPaused, EventResumed, EventNote:
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
	if err := errs.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// ParseSelector reads label selector terms of the form key=value; all terms
// must match.
func ParseSelector(terms []string) (map[string]string, error) {
	sel := map[string]string{}
	errs := &compute.ValidationError{}
	for i, term := range terms {
		k, v, ok := strings.Cut(term, "=")
		if !ok || !labelKeyRule.MatchString(k) || !labelValueRule.MatchString(v) {
			errs.Add(fmt.Sprintf("/label/%d", i), "%q is not a label selector of the form key=value", term)
			continue
		}
		sel[k] = v
	}
	if err := errs.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return sel, nil
}
