package api

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// The API reference page renders the OpenAPI document in the browser. Its
// files are embedded in the binary and it loads nothing else, so it works
// where no CDN can be reached; its Content-Security-Policy holds it to that.
//
//go:embed docs
var docsFiles embed.FS

const (
	docsDir  = "docs"
	docsPage = "index.html"
	docsCSP  = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

// docsTypes are the media types of the page's files, by extension; a file
// of another kind is not served.
var docsTypes = map[string]string{".css": "text/css", ".js": "text/javascript"}

func (s *Server) docs(w http.ResponseWriter, r *http.Request) error {
	b, err := docsFiles.ReadFile(path.Join(docsDir, docsPage))
	if err != nil {
		return err
	}
	writeDocsFile(w, "text/html", b)
	return nil
}

func (s *Server) docsAsset(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("asset")
	if !slices.Contains(docsAssetNames(), name) {
		return problem(http.StatusNotFound, wire.CodeNotFound, "the docs page has no file "+name)
	}
	b, err := docsFiles.ReadFile(path.Join(docsDir, name))
	if err != nil {
		return err
	}
	writeDocsFile(w, docsTypes[path.Ext(name)], b)
	return nil
}

func writeDocsFile(w http.ResponseWriter, mediaType string, b []byte) {
	w.Header().Set("Content-Type", mediaType+"; charset=utf-8")
	w.Header().Set("Content-Security-Policy", docsCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

// docsAssetNames lists the files the page loads, sorted.
func docsAssetNames() []string {
	entries, _ := fs.ReadDir(docsFiles, docsDir)
	var out []string
	for _, e := range entries {
		if _, ok := docsTypes[path.Ext(e.Name())]; ok && !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// docsPageBody is the body of GET /docs.
type docsPageBody struct{}

func (docsPageBody) openAPIContent() openapi3.Content {
	return openapi3.Content{"text/html": openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())}
}

// docsAssetBody is the body of GET /docs/{asset}.
type docsAssetBody struct{}

func (docsAssetBody) openAPIContent() openapi3.Content {
	c := openapi3.Content{}
	for _, name := range docsAssetNames() {
		c[docsTypes[path.Ext(name)]] = openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())
	}
	return c
}
