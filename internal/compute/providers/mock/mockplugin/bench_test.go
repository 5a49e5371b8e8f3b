package mockplugin_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/sdk/plugin"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// BenchmarkCallOverhead measures one GetStatus of a running tenant, in
// process and across the plugin boundary, and reports the latency's p50
// and p99: the boundary's overhead is the difference.
//
//	go test -run '^$' -bench CallOverhead -benchtime 20000x ./internal/compute/providers/mock/mockplugin
func BenchmarkCallOverhead(b *testing.B) {
	for _, tc := range providers {
		b.Run(tc.name, func(b *testing.B) {
			p := tc.new(b)
			spec := resolve(b, p, "t-bench", `{"image": "example.com/app:1"}`)
			if _, err := p.Provision(context.Background(), spec); err != nil {
				b.Fatal(err)
			}
			took := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if _, err := p.GetStatus(context.Background(), "t-bench"); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			reportPercentiles(b, took)
		})
	}
}

// BenchmarkResync measures what the controller's resync of 10,000
// tenants costs, in process and through a plugin: a GetStatus of each, 16
// at a time (the controller's default workers).
//
//	go test -run '^$' -bench Resync -benchtime 1x ./internal/compute/providers/mock/mockplugin
func BenchmarkResync(b *testing.B) {
	const tenants, workers = 10000, 16
	for _, tc := range providers {
		b.Run(tc.name, func(b *testing.B) {
			p := tc.new(b)
			ids := make([]string, tenants)
			spec := resolve(b, p, "t-0", `{"image": "example.com/app:1"}`)
			for i := range ids {
				ids[i] = fmt.Sprintf("t-%d", i)
				s := spec.Clone()
				s.TenantID = ids[i]
				if _, err := p.Provision(context.Background(), s); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				work := make(chan string)
				var wg sync.WaitGroup
				for range workers {
					wg.Go(func() {
						for id := range work {
							if _, err := p.GetStatus(context.Background(), id); err != nil {
								b.Error(err)
							}
						}
					})
				}
				for _, id := range ids {
					work <- id
				}
				close(work)
				wg.Wait()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/resync")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*tenants), "µs/tenant")
		})
	}
}

// providers are the mock in process and served as a plugin.
var providers = []struct {
	name string
	new  func(b *testing.B) provider.Provider
}{
	{"in-process", func(b *testing.B) provider.Provider {
		p, err := mock.New(mock.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}},
	{"plugin", func(b *testing.B) provider.Provider {
		p, err := launch(b, io.Discard, plugin.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return p.Provider()
	}},
}

func reportPercentiles(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	at := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
