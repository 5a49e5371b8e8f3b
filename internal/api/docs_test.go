package api_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// assetRef finds the files a page loads: scripts, style sheets, icons.
var assetRef = regexp.MustCompile(`<(?:script|link|img)\b[^>]*?\b(?:src|href)="([^"]*)"`)

func TestDocsPage(t *testing.T) {
	ts := newServer(t, roleTokens...)
	ts.token = "" // the page and what it loads are open
	res := ts.do(t, "GET", "/docs", "", "")
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: %d %s", res.status, res.header.Get("Content-Type"))
	}
	if csp := res.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q does not keep the page to its own files", csp)
	}
	page := string(res.body)
	refs := assetRef.FindAllStringSubmatch(page, -1)
	if len(refs) < 2 {
		t.Fatalf("the page loads %d files; want its script and style sheet:\n%s", len(refs), page)
	}
	base, _ := url.Parse(ts.URL + "/docs")
	for _, m := range refs {
		ref, err := url.Parse(m[1])
		if err != nil || ref.IsAbs() || ref.Host != "" || strings.HasPrefix(m[1], "//") {
			t.Errorf("the page loads %q, which is not one of its own files", m[1])
			continue
		}
		target := base.ResolveReference(ref)
		asset := ts.do(t, "GET", target.RequestURI(), "", "")
		if asset.status != http.StatusOK || len(asset.body) == 0 {
			t.Errorf("GET %s (from %q): %d", target.Path, m[1], asset.status)
		}
		ct := asset.header.Get("Content-Type")
		switch {
		case strings.HasSuffix(target.Path, ".js") && !strings.HasPrefix(ct, "text/javascript"),
			strings.HasSuffix(target.Path, ".css") && !strings.HasPrefix(ct, "text/css"):
			t.Errorf("GET %s: Content-Type %q", target.Path, ct)
		}
		// Nor does a script or style sheet reach out for anything.
		if body := string(asset.body); strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s names a URL on the network", target.Path)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Errorf("the page names a URL on the network:\n%s", page)
	}
	if res := ts.do(t, "GET", "/docs/missing.js", "", ""); res.status != http.StatusNotFound || res.problem(t).Code != "not_found" {
		t.Errorf("GET /docs/missing.js: %d %s", res.status, res.body)
	}
}
