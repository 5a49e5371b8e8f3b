package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// BenchmarkSizes are the table sizes the store benchmarks run at.
var BenchmarkSizes = []int{10_000, 100_000}

// Seeder fills a store with n tenants quickly; SeedTenants builds them.
type Seeder func(b *testing.B, s tenant.Store, n int)

// SeedTenants returns n tenants as Create would store them, in id order,
// for adapters that seed benchmarks with bulk inserts.
func SeedTenants(n int) []*tenant.Tenant {
	out := make([]*tenant.Tenant, n)
	now := time.Now()
	for i := range out {
		t, _, err := tenant.NewTenant(newTenant(fmt.Sprintf("seed-%07d", i)), "bench", now)
		if err != nil {
			panic(err)
		}
		out[i] = t
	}
	return out
}

// Benchmark measures what the API and the controller do most: create, get
// by id, record an observation, and read a page of 50 (first page and one
// from the middle), each at every size in BenchmarkSizes.
func Benchmark(b *testing.B, open func(b *testing.B) tenant.Store, seed Seeder) {
	for _, n := range BenchmarkSizes {
		b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
			s := open(b)
			b.Cleanup(func() { s.Close() })
			seed(b, s, n)
			ids := collectIDs(b, s)
			if len(ids) < n {
				b.Fatalf("seeded %d tenants, found %d", n, len(ids))
			}
			b.Run("Create", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					// Unique across -count runs, which share the store.
					if _, err := s.Create(ctx, newTenant(fmt.Sprintf("bench-%d-%d", n, benchCreates.Add(1))), "bench"); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("Get", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := s.Get(ctx, ids[(i*7919)%len(ids)], tenant.GetOptions{}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("UpdateObserved", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					obs := tenant.Observation{Generation: 1, Status: tenant.StatusRequested, Message: fmt.Sprint("attempt ", i), Actor: "bench"}
					if _, err := s.UpdateObserved(ctx, ids[(i*7919)%len(ids)], obs); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			middle := tenant.EncodePageToken(ids[len(ids)/2])
			for _, page := range []struct{ name, token string }{{"ListFirstPage", ""}, {"ListMiddlePage", middle}} {
				b.Run(page.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						p, err := s.List(ctx, tenant.ListOptions{PageSize: 50, PageToken: page.token})
						if err != nil || len(p.Tenants) != 50 {
							b.Fatalf("List: %d tenants, %v", len(p.Tenants), err)
						}
					}
				})
			}
		})
	}
}

// benchCreates numbers the tenants the Create benchmark makes.
var benchCreates atomic.Int64

// SeedWithCreate is the Seeder that calls Create n times.
func SeedWithCreate(b *testing.B, s tenant.Store, n int) {
	for i := range n {
		if _, err := s.Create(ctx, newTenant(fmt.Sprintf("seed-%07d", i)), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

func collectIDs(b *testing.B, s tenant.Store) []string {
	var ids []string
	opts := tenant.ListOptions{PageSize: tenant.MaxPageSize}
	for {
		page, err := s.List(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range page.Tenants {
			ids = append(ids, t.ID)
		}
		if page.NextPageToken == "" {
			return ids
		}
		opts.PageToken = page.NextPageToken
	}
}
