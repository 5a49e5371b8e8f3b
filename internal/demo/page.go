package demo

import (
	"fmt"
	"html/template"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Page is what the demo page shows. Nothing in it is secret: environment
// variables are listed by name only.
type Page struct {
	// Tenant is the tenant's name; empty when the workload was not told.
	Tenant string
	// Args are the arguments after the tenant's name.
	Args []string
	// Host is the container's host name.
	Host string
	// EnvNames are the names of the container's environment variables.
	EnvNames []string
	// Started is when the server started.
	Started time.Time
	// Version is landlord's version.
	Version string
	// Message is the value of the environment variable MessageVariable,
	// the one value the page shows: a plan can set it to say which
	// version a tenant runs. It is meant to be public: never put a
	// secret in it.
	Message string
}

// MessageVariable is the environment variable whose value the page shows.
const MessageVariable = "DEMO_MESSAGE"

// EnvNames returns the names of environ's "NAME=value" entries, sorted,
// without their values.
func EnvNames(environ []string) []string {
	names := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Handler serves the page on / (HTML to browsers, text to others) and "ok"
// on /healthz, for a health check.
func Handler(p Page) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "text/html") {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = pageHTML.Execute(w, p.view())
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, p.Text())
	})
	return mux
}

// view is the page as its templates read it.
type view struct {
	Title, Args, Host, Started, Version, EnvNote, Message string
	EnvNames                                              []string
}

const envNote = "names only: secrets reach a container as environment variables too, and from inside it nothing tells them apart, so no value is shown but " + MessageVariable + "'s, as the message"

func (p Page) view() view {
	title := "landlord demo: tenant " + p.Tenant
	if p.Tenant == "" {
		title = "landlord demo (no tenant name: pass it as the first of the config's args)"
	}
	args := strings.Join(p.Args, " ")
	if args == "" {
		args = "(none)"
	}
	return view{Title: title, Args: args, Host: p.Host, Started: p.Started.UTC().Format(time.RFC3339),
		Version: p.Version, EnvNote: envNote, EnvNames: p.EnvNames, Message: p.Message}
}

// Text is the page as plain text.
func (p Page) Text() string {
	v := p.view()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", v.Title)
	fmt.Fprintf(&b, "host:     %s\n", v.Host)
	fmt.Fprintf(&b, "started:  %s\n", v.Started)
	fmt.Fprintf(&b, "args:     %s\n", v.Args)
	if v.Message != "" {
		fmt.Fprintf(&b, "message:  %s\n", v.Message)
	}
	fmt.Fprintf(&b, "served by landlord demo serve, %s\n\n", v.Version)
	fmt.Fprintf(&b, "environment (%s):\n", v.EnvNote)
	for _, name := range v.EnvNames {
		fmt.Fprintf(&b, "  %s\n", name)
	}
	return b.String()
}

var pageHTML = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}dt{font-weight:bold}code{font-size:90%}</style>
</head><body>
<h1>{{.Title}}</h1>
<dl>
<dt>host</dt><dd><code>{{.Host}}</code></dd>
<dt>started</dt><dd>{{.Started}}</dd>
<dt>args</dt><dd><code>{{.Args}}</code></dd>
{{if .Message}}<dt>message</dt><dd>{{.Message}}</dd>{{end}}
<dt>environment</dt><dd><p>{{.EnvNote}}.</p><ul>{{range .EnvNames}}<li><code>{{.}}</code></li>{{end}}</ul></dd>
</dl>
<p>Served by <code>landlord demo serve</code>, {{.Version}}.</p>
</body></html>
`))
