package oidc_test

import (
	"context"
	"fmt"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/jaxxstorm/landlord/internal/oidc"
	"github.com/jaxxstorm/landlord/internal/oidc/oidctest"
)

func newBenchVerifier(tb testing.TB, iss *oidctest.Issuer) *oidc.Verifier {
	tb.Helper()
	v, err := oidc.New(oidc.Config{Issuer: iss.URL, Audience: oidctest.Audience, AdminGroups: []string{"platform"}})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// BenchmarkVerifyToken measures the check of a token seen before, with
// its key cached: the cost an identity provider's token adds to each of
// a client's requests. BenchmarkVerifyNewToken measures a token's first.
func BenchmarkVerifyToken(b *testing.B) {
	for _, alg := range []jose.SignatureAlgorithm{jose.RS256, jose.ES256} {
		b.Run(string(alg), func(b *testing.B) {
			iss := oidctest.New(b)
			iss.Rotate(b, alg)
			v := newBenchVerifier(b, iss)
			tok := iss.Token(b, oidctest.Claims{Subject: "alice@example.com", Groups: []string{"eng", "platform", "support"}})
			if _, err := v.VerifyToken(context.Background(), tok); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.VerifyToken(context.Background(), tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerifyNewToken(b *testing.B) {
	iss := oidctest.New(b)
	v := newBenchVerifier(b, iss)
	toks := make([]string, 256)
	for i := range toks {
		toks[i] = iss.Token(b, oidctest.Claims{Subject: fmt.Sprintf("user-%d", i), Groups: []string{"eng", "platform", "support"}})
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// More tokens than the cache keeps would be needed to miss it
		// for ever; a fresh verifier every 256 does the same.
		if i%len(toks) == 0 {
			b.StopTimer()
			v = newBenchVerifier(b, iss)
			if err := v.Warm(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, err := v.VerifyToken(context.Background(), toks[i%len(toks)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
