package ui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assetFS embed.FS

// routes are the console's pages, under Prefix.
func (c *Console) routes() map[string]http.Handler {
	p := c.page
	return map[string]http.Handler{
		"GET /ui/{$}":                                             p(c.listTenants),
		"GET /ui/signin":                                          http.HandlerFunc(c.signinPage),
		"POST /ui/signin":                                         http.HandlerFunc(c.signin),
		"POST /ui/signout":                                        p(c.signout),
		"GET /ui/tenants/new":                                     p(c.newTenant),
		"POST /ui/tenants/new":                                    p(c.submitForm),
		"GET /ui/tenants/{tenant}":                                p(c.tenantPage),
		"GET /ui/tenants/{tenant}/edit":                           p(c.editTenant),
		"POST /ui/tenants/{tenant}/edit":                          p(c.submitForm),
		"POST /ui/tenants/{tenant}/pause":                         p(c.pause),
		"POST /ui/tenants/{tenant}/resume":                        p(c.resume),
		"POST /ui/tenants/{tenant}/retry":                         p(c.retry),
		"POST /ui/tenants/{tenant}/delete":                        p(c.deleteTenant),
		"GET /ui/providers":                                       p(c.providersPage),
		"GET /ui/rollouts":                                        p(c.listRollouts),
		"GET /ui/rollouts/{rollout}":                              p(c.rolloutPage),
		"POST /ui/rollouts/{rollout}/{action}":                    p(c.actOnRollout),
		"GET /ui/plans":                                           p(c.listPlans),
		"GET /ui/plans/{plan}":                                    p(c.planPage),
		"GET /ui/subscriptions":                                   p(c.listSubscriptions),
		"GET /ui/subscriptions/new":                               p(c.newSubscription),
		"POST /ui/subscriptions/new":                              p(c.createSubscription),
		"GET /ui/subscriptions/{subscription}":                    p(c.subscriptionPage),
		"POST /ui/subscriptions/{subscription}/enable":            p(c.enableSubscription),
		"POST /ui/subscriptions/{subscription}/disable":           p(c.disableSubscription),
		"POST /ui/subscriptions/{subscription}/rotate":            p(c.rotateSecret),
		"POST /ui/subscriptions/{subscription}/delete":            p(c.deleteSubscription),
		"POST /ui/subscriptions/{subscription}/redeliver":         p(c.redeliver),
		"GET /ui/subscriptions/{subscription}/deliveries/{event}": p(c.deliveryPage),
		"GET /ui/live":                                            c.stream(c.liveStream),
		"GET /ui/assets/":                                         assets(),
		"/ui/":                                                    p(c.notFound),
	}
}

func (c *Console) notFound(x *call) error {
	c.renderError(x.w, x.r, x.sess, http.StatusNotFound, "There is no page here. The tenants are on the first page.")
	return nil
}

// assets serves the style sheet, script and icon embedded in the binary.
// Pages name them with their content's hash (asset), so browsers may keep
// them for a year and still get a new one the moment it changes.
func assets() http.Handler {
	files := http.FileServerFS(assetFS)
	return http.StripPrefix("/ui", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no listing
			return
		}
		if r.URL.Query().Get("v") != "" {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		files.ServeHTTP(w, r)
	}))
}

// assetVersions are the hashes of the assets' contents, by name.
var assetVersions = func() map[string]string {
	out := map[string]string{}
	entries, _ := fs.ReadDir(assetFS, "assets")
	for _, e := range entries {
		b, _ := fs.ReadFile(assetFS, "assets/"+e.Name())
		sum := sha256.Sum256(b)
		out[e.Name()] = hex.EncodeToString(sum[:6])
	}
	return out
}()

// asset is the URL of an asset, with its version.
func asset(name string) string { return Prefix + "assets/" + name + "?v=" + assetVersions[name] }
