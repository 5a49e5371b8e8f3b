package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// compatAnswer is an answer as the compatibility test compares it: what
// differs between two runs of the script on its own masked, the body a
// canonical JSON tree (or text).
type compatAnswer struct {
	Status int
	Header map[string]string
	Body   any
}

// compatVolatile masks what two runs of the script may answer differently
// although they behave alike, for one run. Ids (tenant UUIDs, new in each
// run) and the tenant page tokens that hold them become placeholders
// numbered in order of appearance, which it remembers, so that a request
// of the recorded run that names one can be sent with the live run's value
// of the same placeholder (replacer). Times become placeholders numbered
// within each answer, which keeps which times of an answer are equal (a
// tenant's created_at and updated_at after a create, the events of one
// request); generated request ids become one placeholder. Nothing else
// is masked: a member added, removed or changed is a difference.
type compatVolatile struct {
	masks  map[string]string // value → placeholder
	values map[string]string // placeholder → value
	ids    int
	// times are the current answer's times → placeholders.
	times map[string]string
}

func newCompatVolatile() *compatVolatile {
	return &compatVolatile{masks: map[string]string{}, values: map[string]string{}}
}

var (
	// compatID is a tenant id: a UUID, as tenant.NewID makes them.
	compatID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// compatTime is an RFC 3339 time as encoding/json writes a time.Time.
	compatTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)
)

// Headers the transcript leaves out: they follow from the time and the
// body.
var compatIgnoredHeaders = []string{"Date", "Content-Length"}

// normalize is res, the answer to req, with what varies between runs
// masked.
func (v *compatVolatile) normalize(req compatRequest, res compatResponse) compatAnswer {
	// A request id the client chose is echoed: it must come back as
	// sent. One the server makes is new each time.
	_, chosen := req.Header["X-Request-Id"]
	out := compatAnswer{Status: res.Status, Header: map[string]string{}}
	v.times = map[string]string{}
	// Keys in order, so that placeholders are numbered alike in two runs.
	for _, k := range slices.Sorted(maps.Keys(res.Header)) {
		val := res.Header[k]
		switch {
		case k == "X-Request-Id" && !chosen:
			val = "<request-id>"
		default:
			val = v.maskIDs(val)
		}
		out.Header[k] = val
	}
	if len(res.Body) > 0 {
		var tree any
		d := json.NewDecoder(bytes.NewReader(res.Body))
		d.UseNumber()
		if err := d.Decode(&tree); err != nil {
			out.Body = fmt.Sprintf("<body not JSON: %v> %s", err, res.Body)
		} else {
			out.Body = v.walk("", tree, chosen)
		}
	} else if res.Text != "" {
		out.Body = v.maskIDs(res.Text)
	}
	return out
}

// walk masks the strings of a JSON tree; key is the member that holds
// value, "" for an array's items and the top.
func (v *compatVolatile) walk(key string, value any, chosenRequestID bool) any {
	switch x := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out[k] = v.walk(k, x[k], chosenRequestID)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = v.walk("", val, chosenRequestID)
		}
		return out
	case string:
		switch {
		case key == "instance" && !chosenRequestID && x != "":
			return "<request-id>" // a problem's instance is its request's id
		case compatTime.MatchString(x):
			return v.time(x)
		case key == "next_page_token" && x != "":
			return v.pageToken(x)
		}
		return v.maskIDs(x)
	}
	return value
}

// time masks t, a time of the current answer. Two runs write at other
// times, but the same times in an answer of one are the same in the
// other's: each request writes at one time, and no two requests write in
// the same microsecond.
func (v *compatVolatile) time(t string) string {
	if m, ok := v.times[t]; ok {
		return m
	}
	m := fmt.Sprintf("<time-%d>", len(v.times)+1)
	v.times[t] = m
	return m
}

// maskIDs is s with each id in it masked.
func (v *compatVolatile) maskIDs(s string) string {
	return compatID.ReplaceAllStringFunc(s, func(id string) string {
		if m, ok := v.masks[id]; ok {
			return m
		}
		v.ids++
		return v.mask(id, fmt.Sprintf("<id-%d>", v.ids))
	})
}

// pageToken masks a page token that continues after a tenant id; others
// (those of event listings, after a sequence number) are kept, since two
// runs of the script write the same events in the same order.
func (v *compatVolatile) pageToken(token string) string {
	after, err := tenant.DecodePageToken(token)
	if err != nil || !compatID.MatchString(after) {
		return token
	}
	return v.mask(token, "<page-token after "+v.maskIDs(after)+">")
}

// mask records value as placeholder and returns placeholder.
func (v *compatVolatile) mask(value, placeholder string) string {
	v.masks[value] = placeholder
	v.values[placeholder] = value
	return placeholder
}

// replacer rewrites a request of v's run into one of live's: each value v
// masked becomes the value live masked the same way.
func (v *compatVolatile) replacer(live *compatVolatile) *strings.Replacer {
	var pairs []string
	for value, placeholder := range v.masks {
		if now, ok := live.values[placeholder]; ok && now != value {
			pairs = append(pairs, value, now)
		}
	}
	return strings.NewReplacer(pairs...)
}
