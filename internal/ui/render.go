package ui

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

//go:embed templates
var templateFS embed.FS

// pages are the console's templates: each page is the layout, the
// partials and its own file.
type pages struct {
	byName map[string]*template.Template
	// partials render the fragments live updates replace.
	partials *template.Template
}

var funcs = template.FuncMap{
	"statusClass":   statusClass,
	"stateClass":    stateClass,
	"window":        window,
	"age":           age,
	"timestamp":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"when":          func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"endpointURL":   endpointURL,
	"pretty":        pretty,
	"id":            fieldID,
	"join":          strings.Join,
	"add":           func(a, b int) int { return a + b },
	"singular":      singular,
	"asset":         asset,
	"actor":         tenantActor,
	"rolloutActor":  rolloutActor,
	"deliveryClass": deliveryClass,
	"latency":       latency,
	"httpStatus":    httpStatus,
	"attemptClass":  attemptClass,
}

func parsePages() (*pages, error) {
	base, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials*.html")
	if err != nil {
		return nil, fmt.Errorf("ui: templates: %w", err)
	}
	files, err := fs.Glob(templateFS, "templates/page_*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: map[string]*template.Template{}, partials: base}
	for _, f := range files {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, f)
		if err != nil {
			return nil, fmt.Errorf("ui: templates: %w", err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(path.Base(f), "page_"), ".html")
		p.byName[name] = t
	}
	return p, nil
}

// view is what every page gets.
type view struct {
	Title string
	// Nav is the section the page is in: tenants, rollouts, plans,
	// subscriptions or providers.
	Nav  string
	User *session
	// CanWrite shows write controls.
	CanWrite bool
	Data     any
}

// render writes a page with status.
func (c *Console) render(w http.ResponseWriter, status int, name string, v view) {
	var b bytes.Buffer
	t := c.pages.byName[name]
	if t == nil {
		panic("ui: no page " + name)
	}
	if err := t.ExecuteTemplate(&b, "layout", v); err != nil {
		c.log.Error("console: render", "page", name, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

func (c *Console) show(x *call, name, title, nav string, data any) error {
	return c.showStatus(x, http.StatusOK, name, title, nav, data)
}

func (c *Console) showStatus(x *call, status int, name, title, nav string, data any) error {
	c.render(x.w, status, name, view{Title: title, Nav: nav, User: x.sess, CanWrite: x.canWrite(), Data: data})
	return nil
}

// fragment renders a partial, for a live update.
func (c *Console) fragment(name string, data any) (string, error) {
	var b bytes.Buffer
	err := c.pages.partials.ExecuteTemplate(&b, name, data)
	return b.String(), err
}

type errorView struct {
	Status  int
	Heading string
	Message string
}

func (c *Console) renderError(w http.ResponseWriter, r *http.Request, sess *session, status int, msg string) {
	heading := http.StatusText(status)
	switch status {
	case http.StatusNotFound:
		heading = "Not found"
	case http.StatusForbidden:
		heading = "Not allowed"
	}
	v := view{Title: heading, User: sess, Data: errorView{Status: status, Heading: heading, Message: msg}}
	if sess != nil {
		v.CanWrite = sess.Role == "admin"
	}
	c.render(w, status, "error", v)
}

// statusClass is the CSS class of a tenant status's badge.
func statusClass(status string) string {
	switch status {
	case client.StatusReady:
		return "ok"
	case client.StatusFailed:
		return "bad"
	case client.StatusDeleted:
		return "gone"
	case client.StatusDeleting:
		return "warn"
	}
	return "busy"
}

// stateClass is the CSS class of the badge of a rollout's or a member's
// state.
func stateClass(state string) string {
	switch state {
	case client.RolloutCompleted, client.MemberDone:
		return "ok"
	case client.RolloutHalted, client.MemberFailed:
		return "bad"
	case client.RolloutPaused, client.RolloutAborting, client.MemberRolledBack:
		return "warn"
	case client.RolloutAborted, client.MemberPending, client.MemberSkipped:
		return "gone"
	}
	return "busy"
}

// window says when a maintenance window is open: "mon, sat 02:00–04:00
// Europe/Berlin".
func window(w *client.MaintenanceWindow) string {
	if w == nil {
		return ""
	}
	days := "every day"
	if len(w.Days) > 0 {
		days = strings.Join(w.Days, ", ")
	}
	return days + " " + w.Start + "–" + w.End + " " + cmp.Or(w.TimeZone, "UTC")
}

// age says how long ago t was, in its largest unit.
func age(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// endpointURL is a link to an endpoint: http for TCP, nothing for UDP.
func endpointURL(e client.Endpoint) string {
	if e.Protocol == client.ProtocolUDP || e.Address == "" || strings.Contains(e.Address, "://") {
		return ""
	}
	return "http://" + e.Address
}

func pretty(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}
