package ecsfake

import (
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// listTaskDefinitions lists revision ARNs as ECS does: families whose name
// starts with familyPrefix (a prefix, so "app" lists "app-2" too), of one
// status (ACTIVE unless asked), by family and revision, ascending unless
// sort is DESC, in pages of maxResults (default 100).
func (s *Server) listTaskDefinitions(_ time.Time, in *ecs.ListTaskDefinitionsInput) (*ecs.ListTaskDefinitionsOutput, error) {
	limit, after, err := paging(in.MaxResults, 100, in.NextToken)
	if err != nil {
		return nil, err
	}
	status := in.Status
	if status == "" {
		status = types.TaskDefinitionStatusActive
	}
	type rev struct {
		family string
		number int32
		arn    string
	}
	var revs []rev
	for family, list := range s.families {
		if !strings.HasPrefix(family, aws.ToString(in.FamilyPrefix)) {
			continue
		}
		for _, td := range list {
			if td.def.Status == status {
				revs = append(revs, rev{family, td.def.Revision, td.arn()})
			}
		}
	}
	slices.SortFunc(revs, func(a, b rev) int {
		if c := strings.Compare(a.family, b.family); c != 0 {
			return c
		}
		return int(a.number - b.number)
	})
	if in.Sort == types.SortOrderDesc {
		slices.Reverse(revs)
	}
	arns := make([]string, len(revs))
	for i, r := range revs {
		arns[i] = r.arn
	}
	page, next := pageAfter(arns, after, limit, func(a string) string { return a })
	return &ecs.ListTaskDefinitionsOutput{TaskDefinitionArns: nonNil(page), NextToken: next}, nil
}
