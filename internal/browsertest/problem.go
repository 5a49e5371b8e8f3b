package browsertest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
)

// Problem is something the page did wrong: what a person would see in red
// in the browser's developer tools.
type Problem struct {
	// Kind says where it came from: "exception", "console.error",
	// "console.assert", "crash", or "log/" and the browser log's source,
	// such as "log/security" for what the Content-Security-Policy blocked
	// and "log/network" for a resource that failed to load.
	Kind string
	// Text is the message, as the developer tools show it.
	Text string
	// URL and Line say where, when the browser knows (Line counts from 1;
	// 0 is unknown).
	URL  string
	Line int64
}

// String returns the problem on one line, with where it came from.
func (p Problem) String() string {
	s := p.Kind + ": " + p.Text
	switch {
	case p.URL != "" && p.Line > 0:
		s += fmt.Sprintf(" (%s:%d)", p.URL, p.Line)
	case p.URL != "":
		s += " (" + p.URL + ")"
	}
	return s
}

// Take returns the problems of the page so far and forgets them, so that
// they do not fail the test: a test that expects a problem takes it and
// checks it. The browser reports a problem before it answers the command
// that follows it, so after an action such as chromedp.Navigate returns,
// the problems of the page it loaded are there to take.
func (b *Browser) Take() []Problem {
	b.mu.Lock()
	defer b.mu.Unlock()
	ps := b.problems
	b.problems = nil
	return ps
}

// check fails the test for every problem it did not take.
func (b *Browser) check() {
	b.t.Helper()
	for _, p := range b.Take() {
		b.t.Errorf("browser: %s", p)
	}
}

// collect records the events of the tab that are problems. It runs on the
// goroutine that reads the tab's messages, so it only appends.
func (b *Browser) collect(ev any) {
	p, ok := problemOf(ev)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, p)
}

// problemOf returns the problem that ev reports, if it reports one.
func problemOf(ev any) (Problem, bool) {
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		if d == nil {
			return Problem{Kind: "exception", Text: "(no details)"}, true
		}
		p := Problem{Kind: "exception", Text: d.Text, URL: d.URL, Line: d.LineNumber + 1}
		if d.Exception != nil && d.Exception.Description != "" {
			// The description is the message and then the stack.
			first, _, _ := strings.Cut(d.Exception.Description, "\n")
			p.Text = strings.TrimSpace(d.Text + " " + first)
		}
		if p.URL == "" && d.StackTrace != nil && len(d.StackTrace.CallFrames) > 0 {
			f := d.StackTrace.CallFrames[0]
			p.URL, p.Line = f.URL, f.LineNumber+1
		}
		return p, true
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return Problem{}, false
		}
		p := Problem{Kind: "console." + string(ev.Type), Text: argsText(ev.Args)}
		if st := ev.StackTrace; st != nil && len(st.CallFrames) > 0 {
			p.URL, p.Line = st.CallFrames[0].URL, st.CallFrames[0].LineNumber+1
		}
		return p, true
	case *log.EventEntryAdded:
		e := ev.Entry
		if e == nil || (e.Level != log.EntryLevelError && e.Source != log.EntrySourceSecurity) {
			return Problem{}, false
		}
		if e.Source == log.EntrySourceNetwork && isFavicon(e.URL) {
			// The browser asks for /favicon.ico by itself when the page
			// names no icon, at a time of its choosing: a 404 is no bug of
			// the page, and would fail a test or not depending on timing.
			return Problem{}, false
		}
		// The log's line numbers count from 0, as the runtime's do.
		line := e.LineNumber
		if e.URL != "" {
			line++
		}
		return Problem{Kind: "log/" + string(e.Source), Text: e.Text, URL: e.URL, Line: line}, true
	case *inspector.EventTargetCrashed:
		return Problem{Kind: "crash", Text: "the page crashed"}, true
	}
	return Problem{}, false
}

// argsText joins the arguments of a console call as the console shows
// them, roughly: strings as they are, other values by their description.
func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		var s string
		switch {
		case a.Type == runtime.RemoteObjectTypeString && json.Unmarshal(a.Value, &s) == nil:
		case a.Description != "":
			s = a.Description
		case a.UnserializableValue != "":
			s = string(a.UnserializableValue)
		case len(a.Value) > 0:
			s = string(a.Value)
		default:
			s = string(a.Type)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// isFavicon reports whether rawURL is a site's default icon.
func isFavicon(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.Path == "/favicon.ico"
}
