package ui_test

import (
	"fmt"
	"net/http"
	"testing"
)

// BenchmarkPages measures the pages a user opens most, each with the API
// calls it makes in the process: the list of 50 tenants and a tenant with
// its history (the mock provider, SQLite).
func BenchmarkPages(b *testing.B) {
	s := newSite(b, siteOptions{})
	for i := range 50 {
		s.createTenant(b, fmt.Sprintf(`{"name":"t%02d","compute_config":{"image":"a","ports":[{"container_port":80}],"env":{"A":"1"}},"labels":{"tier":"gold"}}`, i))
	}
	br := s.browser(b)
	for _, path := range []string{"/ui/", "/ui/tenants/t07", "/ui/tenants/t07/edit"} {
		b.Run(path, func(b *testing.B) {
			br.t = b
			b.ReportAllocs()
			for b.Loop() {
				if p := br.get(path); p.status != http.StatusOK {
					b.Fatalf("%s: %d", path, p.status)
				}
			}
		})
	}
}
