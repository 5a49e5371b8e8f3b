package ecsfake

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// TestTagRules sends each tag list through the three operations that take
// tags and wants API_Tag's rules applied alike.
func TestTagRules(t *testing.T) {
	tag := func(k, v string) types.Tag { return types.Tag{Key: aws.String(k), Value: aws.String(v)} }
	many := func(n int) []types.Tag {
		out := make([]types.Tag, n)
		for i := range out {
			out[i] = tag(fmt.Sprintf("k%d", i), "v")
		}
		return out
	}
	tests := []struct {
		name    string
		tags    []types.Tag
		wantErr string // "" for accepted
	}{
		{"50 tags", many(50), ""},
		{"51 tags", many(51), "at most 50 tags"},
		{"empty key", []types.Tag{tag("", "v")}, "between 1 and 128"},
		{"key of 128 characters, more bytes", []types.Tag{tag(strings.Repeat("é", 128), "v")}, ""},
		{"key of 129", []types.Tag{tag(strings.Repeat("k", 129), "v")}, "between 1 and 128"},
		{"value of 256 characters, more bytes", []types.Tag{tag("k", strings.Repeat("ü", 256))}, ""},
		{"value of 257", []types.Tag{tag("k", strings.Repeat("v", 257))}, "at most 256"},
		{"empty value", []types.Tag{tag("k", "")}, ""},
		{"allowed punctuation and spaces", []types.Tag{tag("team name+=._:/@-", "a b+=._:/@-")}, ""},
		{"key with a comma", []types.Tag{tag("a,b", "v")}, "Tag key"},
		{"value with a semicolon", []types.Tag{tag("k", "a;b")}, "Tag value"},
		{"value with an ampersand", []types.Tag{tag("k", "me & you")}, "Tag value"},
		{"reserved key any case", []types.Tag{tag("AwS:created", "v")}, "reserved"},
	}
	ctx := context.Background()
	calls := map[string]func(*ecs.Client, []types.Tag) error{
		"TagResource": func(c *ecs.Client, tags []types.Tag) error {
			svc := mustCreate(t, c, serviceInput("tagged", "app", 0))
			_, err := c.TagResource(ctx, &ecs.TagResourceInput{ResourceArn: svc.ServiceArn, Tags: tags})
			return err
		},
		"CreateService": func(c *ecs.Client, tags []types.Tag) error {
			in := serviceInput("svc", "app", 0)
			in.Tags = tags
			_, err := c.CreateService(ctx, in)
			return err
		},
		"RegisterTaskDefinition": func(c *ecs.Client, tags []types.Tag) error {
			in := &ecs.RegisterTaskDefinitionInput{Family: aws.String("tagged"), ContainerDefinitions: oneContainer("nginx"), Tags: tags}
			_, err := c.RegisterTaskDefinition(ctx, in)
			return err
		},
	}
	for _, tt := range tests {
		for op, call := range calls {
			t.Run(tt.name+"/"+op, func(t *testing.T) {
				_, c := newFake(t, Options{})
				mustRegister(t, c, "app", "nginx", fargate)
				err := call(c, tt.tags)
				if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), "InvalidParameterException") || !strings.Contains(err.Error(), tt.wantErr)) {
					t.Errorf("%s: %v, want %q", op, err, tt.wantErr)
				}
			})
		}
	}
}

// TestTagResourceMergedLimit: tags added to a resource count with those it
// has, the limit of 50 applying to the total.
func TestTagResourceMergedLimit(t *testing.T) {
	ctx := context.Background()
	_, c := newFake(t, Options{})
	mustRegister(t, c, "app", "nginx", fargate)
	in := serviceInput("svc", "app", 0)
	for i := range 40 {
		in.Tags = append(in.Tags, types.Tag{Key: aws.String(fmt.Sprintf("a%d", i)), Value: aws.String("v")})
	}
	svc := mustCreate(t, c, in)
	var more []types.Tag
	for i := range 11 {
		more = append(more, types.Tag{Key: aws.String(fmt.Sprintf("b%d", i)), Value: aws.String("v")})
	}
	if _, err := c.TagResource(ctx, &ecs.TagResourceInput{ResourceArn: svc.ServiceArn, Tags: more}); err == nil || !strings.Contains(err.Error(), "at most 50 tags") {
		t.Errorf("40 + 11 tags: %v, want refused", err)
	}
	// Overwriting keys it has does not add to the count.
	if _, err := c.TagResource(ctx, &ecs.TagResourceInput{ResourceArn: svc.ServiceArn, Tags: append(in.Tags[:1:1], more[:10]...)}); err != nil {
		t.Errorf("40 + 10 new tags and one overwritten: %v", err)
	}
}
