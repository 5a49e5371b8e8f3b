package ui

import (
	"context"

	"github.com/jaxxstorm/landlord/client"
)

// planNode is the plan field of the new-tenant form, shaped like the
// request's plan member (name, version, pinned) so that the form's
// machinery shows it and reads it back as it does the provider's fields,
// and the API's problems at /plan/… land at its inputs. It is nil when
// there are no plans to follow.
func planNode(ctx context.Context, api *client.Client) (*node, error) {
	list, err := api.Plans().List(ctx)
	if err != nil || len(list.Plans) == 0 {
		return nil, err
	}
	names := make([]any, len(list.Plans))
	for i, p := range list.Plans {
		names[i] = p.Name
	}
	return &node{Type: "object", Description: "Follow a plan: the tenant's config is the plan version's, and compute_config below holds only what this tenant changes; rollouts of the plan move it to new versions.",
		Properties: []*property{
			{Name: "name", node: &node{Enum: names, Description: "The plan to follow."}},
			{Name: "version", node: &node{Type: "integer", Description: "The version to start at; empty is the latest.", Hints: []string{"at least 1"}}},
			{Name: "pinned", node: &node{Type: "boolean", Description: "Stay on this version: rollouts leave the tenant alone until it is unpinned."}},
		}}, nil
}
