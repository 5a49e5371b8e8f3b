package browsertest_test

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/jaxxstorm/landlord/internal/browsertest"
)

// serve serves files, by path, with the console's strict policy: nothing
// inline, nothing from elsewhere.
func serve(t *testing.T, files map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		ctype := "text/html; charset=utf-8"
		switch {
		case strings.HasSuffix(r.URL.Path, ".js"):
			ctype = "text/javascript"
		case strings.HasSuffix(r.URL.Path, ".css"):
			ctype = "text/css"
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// page is an HTML document whose body is body, with the console's head.
func page(body string) string {
	return `<!doctype html>
<html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/favicon.svg">
<title>test</title>
<link rel="stylesheet" href="/app.css">
</head><body>
` + body + `
</body></html>`
}

const favicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>`

func TestClickScreenshot(t *testing.T) {
	srv := serve(t, map[string]string{
		"/": page(`<button id="go">Go</button> <p id="out">waiting</p>
<div class="tall"></div>
<script src="/app.js"></script>`),
		"/app.js": `document.getElementById("go").addEventListener("click", () => {
	document.getElementById("out").textContent = "clicked at " + window.innerWidth;
});`,
		"/app.css":     `.tall { height: 1500px; background: linear-gradient(#fff, #36c); }`,
		"/favicon.svg": favicon,
	})
	b := browsertest.New(t)

	// At a phone's width, so that the text says which width the page saw.
	b.Do(chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL), chromedp.Click("#go"))
	got, err := chromedp.Run(b.Context(), chromedp.Text("#out"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "clicked at 390"; got != want {
		t.Errorf("#out says %q, want %q", got, want)
	}

	path := b.Screenshot(390, 844, "phone.png")
	f, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(f))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// The whole page: wider than nothing, and taller than the viewport.
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != 390 || h <= 1500 {
		t.Errorf("%s is %dx%d, want 390 wide and over 1500 high (the whole page)", path, w, h)
	}
}

func TestCSPViolationIsAProblem(t *testing.T) {
	doc := page(`<p id="out">inline did not run</p>
<script>document.getElementById("out").textContent = "inline ran";</script>`)
	srv := serve(t, map[string]string{
		"/":            doc,
		"/app.css":     "",
		"/favicon.svg": favicon,
	})
	b := browsertest.New(t)
	b.Do(chromedp.Navigate(srv.URL))

	got, err := chromedp.Run(b.Context(), chromedp.Text("#out"))
	if err != nil {
		t.Fatal(err)
	}
	if got != "inline did not run" {
		t.Errorf("#out says %q: the policy did not block the inline script", got)
	}
	// Taken, the violation does not fail this test; untaken, it would (see
	// TestUntakenProblemsFail).
	ps := b.Take()
	if len(ps) != 1 || ps[0].Kind != "log/security" ||
		!strings.Contains(ps[0].Text, "Content Security Policy") || !strings.Contains(ps[0].Text, "inline script") {
		t.Fatalf("problems %q, want the blocked inline script", ps)
	}
	line := int64(strings.Count(doc[:strings.Index(doc, "<script>")], "\n") + 1)
	if ps[0].URL != srv.URL+"/" || ps[0].Line != line {
		t.Errorf("the violation is at %s:%d, want %s/:%d", ps[0].URL, ps[0].Line, srv.URL, line)
	}
}

// recorder is a test that keeps its errors instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestUntakenProblemsFail(t *testing.T) {
	srv := serve(t, map[string]string{
		"/": page(`<p>broken</p>
<script>console.log("inline");</script>
<script src="/app.js"></script>`),
		"/app.js": `console.log("fine");
console.warn("not a problem");
console.error("lost", 42);
throw new Error("boom");`,
		"/app.css":     "",
		"/favicon.svg": favicon,
	})
	rec := &recorder{}
	t.Run("page", func(t *testing.T) {
		rec.TB = t
		b := browsertest.New(rec)
		b.Do(chromedp.Navigate(srv.URL))
	})
	// The subtest's cleanup has run, and reported what it found.
	t.Logf("the page's test failed with\n%s", strings.Join(rec.errs, "\n"))
	want := []string{
		"browser: log/security: ",
		"browser: console.error: lost 42 (" + srv.URL + "/app.js:3)",
		"browser: exception: Uncaught Error: boom (" + srv.URL + "/app.js:4)",
	}
	if len(rec.errs) != len(want) {
		t.Fatalf("the test failed with\n%s\nwant %d errors", strings.Join(rec.errs, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(rec.errs[i], w) {
			t.Errorf("error %d is %q, want it to start %q", i, rec.errs[i], w)
		}
	}
}
