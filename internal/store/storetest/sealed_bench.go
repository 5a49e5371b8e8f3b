package storetest

import (
	"fmt"
	"testing"

	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// RotateBenchSize is how many tenants BenchmarkSealed's rotation rewrites.
const RotateBenchSize = 1000

// BenchmarkSealed measures what sealing secrets costs a store: Create and
// Get of a tenant with three secrets (SecretTenant) with no sealer and
// with one, and a rotation (seal.Rotate) of RotateBenchSize such
// tenants from one key to the other. open opens a store on a new, empty
// database; the benchmark closes it.
func BenchmarkSealed(b *testing.B, open func(b *testing.B, sealer tenant.Sealer) tenant.Store) {
	for _, sealed := range []bool{false, true} {
		name := "plain"
		var sealer tenant.Sealer
		if sealed {
			name, sealer = "sealed", SealConfigs(b, "k1", "k1")
		}
		b.Run(name, func(b *testing.B) {
			s := open(b, sealer)
			b.Cleanup(func() { s.Close() })
			var last *tenant.Tenant
			b.Run("Create", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					t, err := s.Create(ctx, SecretTenant(fmt.Sprintf("bench-%d", benchCreates.Add(1))), "bench")
					if err != nil {
						b.Fatal(err)
					}
					last = t
				}
			})
			b.Run("Get", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.Get(ctx, last.ID, tenant.GetOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
	b.Run(fmt.Sprintf("Rotate/tenants=%d", RotateBenchSize), func(b *testing.B) {
		s := open(b, SealConfigs(b, "k1", "k1"))
		b.Cleanup(func() { s.Close() })
		for i := range RotateBenchSize {
			if _, err := s.Create(ctx, SecretTenant(fmt.Sprintf("rotate-%d", i)), "bench"); err != nil {
				b.Fatal(err)
			}
		}
		rewriter, ok := s.(tenant.ConfigRewriter)
		if !ok {
			b.Fatalf("%T does not implement tenant.ConfigRewriter", s)
		}
		to := []*seal.Configs{SealConfigs(b, "k2", "k1", "k2"), SealConfigs(b, "k1", "k1", "k2")}
		i := 0
		for b.Loop() {
			stats, err := seal.Rotate(ctx, rewriter, to[i%2], seal.RotateOptions{})
			if err != nil || stats.Rewritten != RotateBenchSize || stats.Resealed != 3*RotateBenchSize {
				b.Fatalf("Rotate = %+v, %v", stats, err)
			}
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*RotateBenchSize), "µs/tenant")
	})
}
