package ecs

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// The rules in this file are what AWS refuses when a task definition is
// registered or a service created, checked before landlord asks: a config
// ECS would refuse is a 422 at its field, with AWS's reason, instead of a
// tenant that fails minutes later. Each rule names the AWS document it
// comes from; docs/compute-providers.md lists them in a table.

// ecrImage matches an image in a private ECR registry
// (<account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]/…), which Fargate
// pulls with the task execution role.
var ecrImage = regexp.MustCompile(`^[0-9]{12}\.dkr\.ecr(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/`)

// AWS's refusals, word for word, for a task definition that needs a task
// execution role and has none.
const (
	// "Amazon ECS task execution IAM role": Fargate pulls private ECR images
	// with it.
	refusalECR = "Fargate requires task definition to have execution role ARN to support ECR images."
	// "Pass sensitive data to an Amazon ECS container": secrets are
	// resolved with it.
	refusalSecrets = "When you are specifying container secrets, you must also specify a value for 'executionRoleArn'."
	// "Send Amazon ECS logs to CloudWatch": on Fargate the awslogs driver
	// sends with it.
	refusalAwslogs = "Fargate requires task definition to have execution role ARN to support log driver awslogs."
)

// pointers says where, in a tenant's config, each container and secret of
// a task definition comes from, for violations at the field.
type pointers struct {
	container map[string]string // container name → its pointer
	secret    map[string]string // "<container>/<name>" → its pointer
}

// checkRegistration applies, to the task definition landlord would
// register, the rules AWS applies to RegisterTaskDefinition
// (API_RegisterTaskDefinition, API_ContainerDefinition,
// API_LogConfiguration). baseUnknown says a task_definition_arn base not
// read yet may carry the execution role, so those rules wait for
// Provision, which reads it.
func checkRegistration(in *ecs.RegisterTaskDefinitionInput, at pointers, baseUnknown bool, errs *violation.List) {
	fargate := slices.Contains(in.RequiresCompatibilities, types.CompatibilityFargate)
	role := aws.ToString(in.ExecutionRoleArn) != ""
	for _, c := range in.ContainerDefinitions {
		name := aws.ToString(c.Name)
		where := at.container[name]
		// API_ContainerDefinition, image: "Up to 255 letters (uppercase and
		// lowercase), numbers, hyphens, underscores, colons, periods,
		// forward slashes, and number signs are allowed."
		if image := aws.ToString(c.Image); len(image) > 255 {
			errs.Add(where+"/image", "has %d characters; ECS takes an image reference of at most 255", len(image))
		}
		if role || baseUnknown {
			continue
		}
		if fargate && ecrImage.MatchString(aws.ToString(c.Image)) {
			errs.Add("/execution_role_arn", "is required: %s is an ECR image and the task runs on Fargate, and ECS refuses such a task definition without one: %q", where+"/image", refusalECR)
		}
		for _, s := range c.Secrets {
			errs.Add("/execution_role_arn", "is required: ECS resolves the secret %s with the task execution role, and refuses a task definition with secrets and no role: %q",
				at.secret[name+"/"+aws.ToString(s.Name)], refusalSecrets)
		}
		if l := c.LogConfiguration; l != nil && len(l.SecretOptions) > 0 {
			errs.Add("/execution_role_arn", "is required: ECS resolves /log_configuration/secret_options with the task execution role: %q", refusalSecrets)
		}
		if l := c.LogConfiguration; fargate && l != nil && l.LogDriver == types.LogDriverAwslogs {
			errs.Add("/execution_role_arn", "is required: the awslogs driver sends logs with the task execution role on Fargate: %q", refusalAwslogs)
		}
	}
	// Service Quotas, "Amazon ECS service quotas": "Task definition size:
	// 64 KiB", the JSON of the RegisterTaskDefinition request.
	if b, err := json.Marshal(in); err == nil && len(b) > maxTaskDefinitionSize {
		errs.Add("", "makes a task definition of %d bytes; ECS takes at most %d (64 KiB): move large values out of env, e.g. into a secret or a file the image reads", len(b), maxTaskDefinitionSize)
	}
}

// maxTaskDefinitionSize is ECS's quota on a task definition's size.
const maxTaskDefinitionSize = 64 << 10

// Log options ECS's awslogs driver documents ("Send Amazon ECS logs to
// CloudWatch", "awslogs log driver options").
const (
	awslogsGroup        = "awslogs-group"
	awslogsRegion       = "awslogs-region"
	awslogsStreamPrefix = "awslogs-stream-prefix"
	awslogsCreateGroup  = "awslogs-create-group"
)

// logGroupName is CloudWatch Logs' rule for a log group name
// (CreateLogGroup, logGroupName: "Minimum length of 1. Maximum length of
// 512. Pattern: [\.\-_/#A-Za-z0-9]+").
var logGroupName = regexp.MustCompile(`^[.\-_/#A-Za-z0-9]{1,512}$`)

// checkLogs checks a log configuration the config gives: the awslogs
// options ECS requires, and secret options as references.
func checkLogs(o *tenantOptions, errs *violation.List) {
	l := o.LogConfiguration
	if l == nil {
		return
	}
	if l.Driver == string(types.LogDriverAwslogs) {
		// "awslogs-group … Required: Yes"; "awslogs-region … Required: Yes";
		// "awslogs-stream-prefix … Required: Yes, when using Fargate". Left
		// out, landlord fills them in (see logConfigurationOf); given, they
		// must be usable.
		if g, ok := l.Options[awslogsGroup]; ok && !logGroupName.MatchString(g) {
			errs.Add("/log_configuration/options/"+awslogsGroup, "%s is not a CloudWatch Logs group name: 1 to 512 letters, digits and . - _ / #", violation.Quote(g))
		}
		if r, ok := l.Options[awslogsRegion]; ok && !regionName.MatchString(r) {
			errs.Add("/log_configuration/options/"+awslogsRegion, "%s is not a region name such as us-west-2", violation.Quote(r))
		}
		if p, ok := l.Options[awslogsStreamPrefix]; ok && (p == "" || strings.ContainsAny(p, ":*")) {
			// CloudWatch Logs, CreateLogStream: "The ':' (colon) and '*'
			// (asterisk) characters are not allowed."
			errs.Add("/log_configuration/options/"+awslogsStreamPrefix, "must be non-empty and without : or *, which log stream names cannot hold")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(l.SecretOptions)) {
		if !secretRef.MatchString(l.SecretOptions[k]) {
			errs.Add("/log_configuration/secret_options/"+violation.Escape(k), "must be an SSM Parameter Store or Secrets Manager ARN, which ECS resolves when a task starts")
		}
	}
}

// tagChars is the character set of AWS tags (API_Tag: "letters, numbers,
// and spaces representable in UTF-8, and the following characters: + - = .
// _ : / @").
var tagChars = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)

// landlordTags is how many tags landlord puts on a tenant's service beside
// the config's (see serviceTags).
const landlordTags = 5

// maxTags is AWS's limit of user tags on one resource (API_TagResource,
// tags: "Maximum number of 50 items"; tags starting with aws: do not
// count).
const maxTags = 50

// checkTags applies AWS's tag rules (API_Tag, "Tagging your Amazon ECS
// resources") to the config's tags.
func checkTags(tags map[string]string, errs *violation.List) {
	if n := len(tags); n+landlordTags > maxTags {
		errs.Add("/tags", "has %d tags; with landlord's %d that is %d, and ECS allows %d on a resource", n, landlordTags, n+landlordTags, maxTags)
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		at, v := "/tags/"+violation.Escape(k), tags[k]
		switch {
		case utf8.RuneCountInString(k) < 1 || utf8.RuneCountInString(k) > 128:
			errs.Add(at, "a tag key has 1 to 128 characters")
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			errs.Add(at, "tag keys starting with aws: are reserved for AWS")
		case strings.HasPrefix(k, "landlord:"):
			errs.Add(at, "tag keys starting with landlord: are landlord's own")
		case !tagChars.MatchString(k):
			errs.Add(at, "a tag key holds letters, digits, spaces and + - = . _ : / @ only")
		}
		switch {
		case utf8.RuneCountInString(v) > 256:
			errs.Add(at, "a tag value has at most 256 characters")
		case !tagChars.MatchString(v):
			errs.Add(at, "a tag value holds letters, digits, spaces and + - = . _ : / @ only")
		}
	}
}

// logConfigurationOf is the log configuration of every container of the
// tenant's task definition: the config's, with the awslogs options it
// leaves out filled in; else the base task definition's; else, when the
// task has an execution role to send with, awslogs to the group
// /ecs/<family>, created on first use, streams prefixed with the tenant's
// name.
func logConfigurationOf(o tenantOptions, family, tenantName string, base *types.LogConfiguration, executionRole bool) *types.LogConfiguration {
	l := o.LogConfiguration
	switch {
	case l != nil:
	case base != nil:
		return base
	case executionRole:
		l = &logConfiguration{Driver: string(types.LogDriverAwslogs)}
	default:
		return nil
	}
	out := &types.LogConfiguration{LogDriver: types.LogDriver(l.Driver), Options: maps.Clone(l.Options)}
	if l.Driver == string(types.LogDriverAwslogs) {
		if out.Options == nil {
			out.Options = map[string]string{}
		}
		if _, ok := out.Options[awslogsGroup]; !ok {
			out.Options[awslogsGroup] = "/ecs/" + family
			// The execution role needs logs:CreateLogGroup for it; see the
			// IAM section of docs/compute-providers.md.
			out.Options[awslogsCreateGroup] = "true"
		}
		if _, ok := out.Options[awslogsRegion]; !ok {
			out.Options[awslogsRegion] = o.region()
		}
		if _, ok := out.Options[awslogsStreamPrefix]; !ok {
			out.Options[awslogsStreamPrefix] = streamPrefix(tenantName)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(l.SecretOptions)) {
		out.SecretOptions = append(out.SecretOptions, types.Secret{Name: aws.String(k), ValueFrom: aws.String(l.SecretOptions[k])})
	}
	return out
}

// streamPrefix is the awslogs stream prefix of a tenant: its name, which
// holds neither : nor *.
func streamPrefix(tenantName string) string {
	if tenantName == "" {
		return managedBy
	}
	return tenantName
}

// refusal words the rules a task definition built over base breaks, found
// at Provision once the base is read.
func refusal(errs violation.List, base string) error {
	err := errs.Err(provider.ErrInvalidSpec)
	if err == nil {
		return nil
	}
	return fmt.Errorf("the task definition built over %s would be refused by ECS: %w", base, err)
}
