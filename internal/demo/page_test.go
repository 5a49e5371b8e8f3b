package demo

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// The page names the tenant and lists the environment's names, never a
// value, as text and as HTML; /healthz answers ok.
func TestPage(t *testing.T) {
	const secret = "s3cr3t-value-of-a-secret"
	environ := []string{"PATH=/usr/bin", "DB_PASSWORD=" + secret, "GREETING=hello there", "EMPTY=", "WITH_EQUALS=a=b"}
	page := Page{Tenant: "acme", Args: []string{"--mode", "gold"}, Host: "3cb00b661039", EnvNames: EnvNames(environ),
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Version: "landlord v1.2.3", Message: "plan standard v2 <new>"}
	if want := []string{"DB_PASSWORD", "EMPTY", "GREETING", "PATH", "WITH_EQUALS"}; !slices.Equal(page.EnvNames, want) {
		t.Errorf("EnvNames = %q, want %q", page.EnvNames, want)
	}
	srv := httptest.NewServer(Handler(page))
	t.Cleanup(srv.Close)
	for _, accept := range []string{"", "text/html,application/xhtml+xml"} {
		body, ctype := get(t, srv.URL+"/", accept)
		if wantHTML := accept != ""; strings.HasPrefix(ctype, "text/html") != wantHTML {
			t.Errorf("Accept %q: Content-Type %q", accept, ctype)
		}
		for _, want := range []string{"tenant acme", "3cb00b661039", "--mode gold", "2026-01-02T03:04:05Z", "landlord v1.2.3",
			"DB_PASSWORD", "GREETING", "PATH", "WITH_EQUALS", "names only", "plan standard v2"} {
			if !strings.Contains(body, want) {
				t.Errorf("Accept %q: the page lacks %q:\n%s", accept, want, body)
			}
		}
		for _, value := range []string{secret, "hello there", "/usr/bin", "a=b"} {
			if strings.Contains(body, value) {
				t.Errorf("Accept %q: the page shows the value %q:\n%s", accept, value, body)
			}
		}
	}
	if body, _ := get(t, srv.URL+"/", "text/html"); !strings.Contains(body, "v2 &lt;new&gt;") {
		t.Errorf("the HTML page does not escape the message:\n%s", body)
	}
	if body, _ := get(t, srv.URL+"/", ""); !strings.Contains(body, "message:  plan standard v2 <new>\n") {
		t.Errorf("the text page lacks the message line:\n%s", body)
	}
	if strings.Contains((Page{}).Text(), "message:") {
		t.Error("a page without a message has a message line")
	}
	if body, _ := get(t, srv.URL+"/healthz", ""); body != "ok\n" {
		t.Errorf("/healthz = %q", body)
	}
	res, err := http.Get(srv.URL + "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /elsewhere: %s, want 404", res.Status)
	}
}

// A page with no tenant name says how to give one; a name is escaped in
// HTML.
func TestPageTenant(t *testing.T) {
	if got := (Page{}).Text(); !strings.Contains(got, "pass it as the first of the config's args") {
		t.Errorf("a page without a tenant name does not say how to give one:\n%s", got)
	}
	srv := httptest.NewServer(Handler(Page{Tenant: "<b>acme</b>"}))
	t.Cleanup(srv.Close)
	if body, _ := get(t, srv.URL+"/", "text/html"); strings.Contains(body, "<b>acme</b>") || !strings.Contains(body, "&lt;b&gt;acme&lt;/b&gt;") {
		t.Errorf("the tenant's name is not escaped:\n%s", body)
	}
}

func get(t *testing.T, url, accept string) (body, contentType string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	return string(b), res.Header.Get("Content-Type")
}
