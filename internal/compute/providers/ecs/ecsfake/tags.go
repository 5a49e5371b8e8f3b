package ecsfake

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// maxTags is ECS's limit of user tags on one resource.
const maxTags = 50

func (s *Server) tagResource(_ time.Time, in *ecs.TagResourceInput) (*ecs.TagResourceOutput, error) {
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	ref := aws.ToString(in.ResourceArn)
	prefix := "arn:aws:ecs:" + s.Region + ":" + s.Account + ":"
	resource, ok := strings.CutPrefix(ref, prefix)
	if !ok {
		return nil, invalidParameter("The ARN %q is not a valid ECS resource ARN for this account and region.", ref)
	}
	kind, rest, _ := strings.Cut(resource, "/")
	switch kind {
	case "service":
		clusterName, name, ok := strings.Cut(rest, "/")
		if !ok {
			return nil, invalidParameter("Long-format service ARNs are required: %q.", ref)
		}
		c, ok := s.clusters[clusterName]
		if !ok {
			return nil, errClusterNotFound
		}
		svc := c.find(name)
		if svc == nil || !svc.live() {
			return nil, errServiceNotFound
		}
		tags, err := mergeTags(svc.spec.Tags, in.Tags)
		if err != nil {
			return nil, err
		}
		svc.spec.Tags = tags
	case "task-definition":
		td, err := s.resolveTaskDef(rest)
		if err != nil || td == nil || !strings.Contains(rest, ":") {
			return nil, invalidParameter("The specified task definition does not exist.")
		}
		tags, err := mergeTags(td.tags, in.Tags)
		if err != nil {
			return nil, err
		}
		td.tags = tags
	case "task":
		t := s.findTask(ref)
		if t == nil {
			return nil, invalidParameter("The specified task does not exist.")
		}
		tags, err := mergeTags(t.tags, in.Tags)
		if err != nil {
			return nil, err
		}
		t.tags = tags
	default:
		return nil, invalidParameter("The fake cannot tag %q resources.", kind)
	}
	return &ecs.TagResourceOutput{}, nil
}

// Tag rules follow the ECS API reference's Tag data type
// (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_Tag.html):
//
//   - "Maximum number of tags per resource - 50"
//   - "Maximum key length - 128 Unicode characters in UTF-8", key "Length
//     Constraints: Minimum length of 1. Maximum length of 128."
//   - "Maximum value length - 256 Unicode characters in UTF-8", value
//     "Minimum length of 0. Maximum length of 256."
//   - "Generally allowed characters are: letters, numbers, and spaces
//     representable in UTF-8, and the following characters: + - = . _ : /
//     @.", the Pattern ^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$ for key and value.
//   - "Do not use aws:, AWS:, or any upper or lowercase combination of such
//     as a prefix for either keys or values as it is reserved for AWS use."
//     The fake refuses the prefix on keys only: it is not known that ECS
//     refuses a value so prefixed, and a fake stricter than ECS would fail
//     a client that works.
//
// The lengths count characters, not bytes. ECS's wording for these
// refusals is not documented; the messages are the fake's.
var tagRE = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)

// checkTags applies ECS's tag rules to the tags of one request: CreateService,
// RegisterTaskDefinition and TagResource (whose merged total mergeTags
// checks).
func checkTags(tags []types.Tag) error {
	if len(tags) > maxTags {
		return invalidParameter("A resource can have at most %d tags.", maxTags)
	}
	for _, t := range tags {
		k, v := aws.ToString(t.Key), aws.ToString(t.Value)
		switch {
		case k == "" || utf8.RuneCountInString(k) > 128:
			return invalidParameter("Tag keys must be between 1 and 128 characters: %q.", k)
		case utf8.RuneCountInString(v) > 256:
			return invalidParameter("Tag values must be at most 256 characters (key %q).", k)
		case !tagRE.MatchString(k):
			return invalidParameter("Tag key %q may contain only letters, numbers, spaces and + - = . _ : / @.", k)
		case !tagRE.MatchString(v):
			return invalidParameter("Tag value %q (key %q) may contain only letters, numbers, spaces and + - = . _ : / @.", v, k)
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			return invalidParameter("Tag keys starting with 'aws:' are reserved: %q.", k)
		}
	}
	return nil
}

// mergeTags returns existing with add applied, a key already present taking
// the new value, refusing a result over the 50 a resource may have. It
// builds a new slice: stored slices are never changed.
func mergeTags(existing, add []types.Tag) ([]types.Tag, error) {
	out := append([]types.Tag(nil), existing...)
	for _, t := range add {
		i := indexTag(out, aws.ToString(t.Key))
		if i >= 0 {
			out[i] = t
		} else {
			out = append(out, t)
		}
	}
	if len(out) > maxTags {
		return nil, invalidParameter("A resource can have at most %d tags.", maxTags)
	}
	return out, nil
}

func indexTag(tags []types.Tag, key string) int {
	for i, t := range tags {
		if aws.ToString(t.Key) == key {
			return i
		}
	}
	return -1
}
