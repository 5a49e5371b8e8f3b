package storetest

import (
	"fmt"
	"testing"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// BenchmarkMemberSummary measures what GET /v1/rollouts and the metrics
// read of each rollout, at 5,000 members: the store's MemberSummary
// against reading every member and counting them.
func BenchmarkMemberSummary(b *testing.B, s tenant.Store) {
	f := fleetStore(b, s)
	mustPlan(b, f, "standard")
	mustPublish(b, f, "standard", `{"image":"a"}`)
	mustPublish(b, f, "standard", `{"image":"b"}`)
	members := make([]fleet.Member, 5000)
	for i := range members {
		members[i] = fleet.Member{TenantID: tenant.NewID(), TenantName: fmt.Sprintf("t-%05d", i), Wave: min(i, 1), From: 1}
	}
	r := mustRollout(b, f, "standard", 2, members)
	ms, ok := f.(fleet.MemberSummarizer)
	if !ok {
		b.Skip("the store has no MemberSummary")
	}
	b.Run("summary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ms.MemberSummary(ctx, r.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("members", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			members, err := f.Members(ctx, r.ID)
			if err != nil {
				b.Fatal(err)
			}
			fleet.Summarize(members)
		}
	})
}
