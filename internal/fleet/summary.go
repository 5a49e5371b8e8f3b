package fleet

import "context"

// Summary is what a rollout's listing and its metrics show of its
// members: how many are in each state, by wave, and which failed.
type Summary struct {
	// ByWave counts the members of each wave by state.
	ByWave map[int]Counts
	// Failed names the tenants of the failed members, sorted.
	Failed []string
}

// Total counts the members of every wave by state.
func (s *Summary) Total() Counts {
	c := Counts{}
	for _, w := range s.ByWave {
		for st, n := range w {
			c[st] += n
		}
	}
	return c
}

// Summarize summarizes members.
func Summarize(members []Member) *Summary {
	s := &Summary{ByWave: map[int]Counts{}}
	for _, m := range members {
		if s.ByWave[m.Wave] == nil {
			s.ByWave[m.Wave] = Counts{}
		}
		s.ByWave[m.Wave][m.State]++
	}
	s.Failed = Failed(members)
	return s
}

// MemberSummarizer is a Store that summarizes a rollout's members
// without reading each one: an optional capability of a Store, found by
// SummarizeMembers.
type MemberSummarizer interface {
	// MemberSummary returns the summary of a rollout's members;
	// ErrNotFound when there is no such rollout.
	MemberSummary(ctx context.Context, id string) (*Summary, error)
}

// SummarizeMembers returns the summary of a rollout's members, from the
// store's MemberSummary when it has one, else from its Members.
func SummarizeMembers(ctx context.Context, s Store, id string) (*Summary, error) {
	if ms, ok := s.(MemberSummarizer); ok {
		return ms.MemberSummary(ctx, id)
	}
	members, err := s.Members(ctx, id)
	if err != nil {
		return nil, err
	}
	return Summarize(members), nil
}
