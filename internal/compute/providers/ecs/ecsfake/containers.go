package ecsfake

import (
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// The rules RegisterTaskDefinition applies to containers and roles. Each
// cites the page it follows; where the message is ECS's own it is the one
// ECS users report getting back, and where ECS's wording is not known the
// comment says the message is the fake's.

// containerNameRE is API_ContainerDefinition's name: "Up to 255 letters
// (uppercase and lowercase), numbers, underscores, and hyphens are
// allowed."
var containerNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,255}$`)

// imageRE and digestRE are API_ContainerDefinition's image: "For images
// using tags (repository-url/image:tag), up to 255 characters total are
// allowed, including letters (uppercase and lowercase), numbers, hyphens,
// underscores, colons, periods, forward slashes, and number signs (#). For
// images using digests (repository-url/image@digest), the 255 character
// limit applies only to the repository URL and image name (everything
// before the @ sign). The only supported hash function is sha256, and the
// hash value after sha256: must be exactly 64 characters (only letters A-F,
// a-f, and numbers 0-9 are allowed)."
var (
	imageRE  = regexp.MustCompile(`^[A-Za-z0-9_:./#-]{1,255}$`)
	digestRE = regexp.MustCompile(`^sha256:[A-Fa-f0-9]{64}$`)
)

// ecrRegistryRE matches an image in an Amazon ECR private registry, whose
// URL is aws_account_id.dkr.ecr.region.amazonaws.com ("Amazon ECR private
// registry", ECR User Guide), .amazonaws.com.cn in the China Regions, the
// ecr-fips endpoints, and the dual-stack aws_account_id.dkr-ecr.region.on.aws
// ("Making requests to Amazon ECR registries").
var ecrRegistryRE = regexp.MustCompile(`^[0-9]{12}\.(dkr\.ecr|dkr\.ecr-fips|dkr-ecr)\.[a-z0-9-]+\.(amazonaws\.com|amazonaws\.com\.cn|on\.aws)/`)

// roleARNRE and roleNameRE are what a task or execution role may be: an
// IAM role ARN, arn:partition:iam::account:role/path/name, or the role's
// short name. taskRoleArn is "The short name or full Amazon Resource Name
// (ARN) of the IAM role" (API_RegisterTaskDefinition); the reference says
// only "ARN" of executionRoleArn, but an AWS maintainer of
// amazon-ecs-render-task-definition (issue 77) says "for either the ECS
// task role or task execution role, you can specify just the name of the
// role vs. the full ARN", so the fake takes both. A role name is "[\w+=,.@-]+", 1 to 64
// characters, and a path "/" or "/…/" of printable ASCII (IAM API
// Reference, CreateRole).
var (
	roleARNRE  = regexp.MustCompile(`^arn:aws(-cn|-us-gov|-iso|-iso-b)?:iam::[0-9]{12}:role/([\x21-\x7E]*/)?[\w+=,.@-]{1,64}$`)
	roleNameRE = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
)

// checkContainers applies API_ContainerDefinition's name and image rules.
func checkContainers(defs []types.ContainerDefinition) error {
	for _, c := range defs {
		name, image := aws.ToString(c.Name), aws.ToString(c.Image)
		if name == "" {
			return clientError("Container.name should not be null or empty.")
		}
		if !containerNameRE.MatchString(name) {
			return clientError("Container.name contains invalid characters.")
		}
		if image == "" {
			return clientError("Container.image should not be null or empty.")
		}
		// ECS's wording for a bad image is not known; this message
		// follows its wording for a bad container name.
		repo, digest, hasDigest := strings.Cut(image, "@")
		if !imageRE.MatchString(repo) || hasDigest && !digestRE.MatchString(digest) {
			return clientError("Container.image contains invalid characters.")
		}
	}
	return nil
}

// checkRoles refuses a task or execution role that is neither an IAM role
// ARN nor a role name. "Role is not valid" is ECS's ClientException for a
// role it cannot use; ECS also says it for a well-formed role that does not
// exist or that ECS may not assume, which the fake cannot know.
func checkRoles(in *ecs.RegisterTaskDefinitionInput) error {
	for _, role := range []*string{in.TaskRoleArn, in.ExecutionRoleArn} {
		if role == nil {
			continue
		}
		if r := *role; !roleARNRE.MatchString(r) && !roleNameRE.MatchString(r) {
			return clientError("Role is not valid")
		}
	}
	return nil
}

// checkExecutionRole applies what needs a task execution role. "Amazon ECS
// task execution IAM role" (Developer Guide, task_execution_IAM_role) lists
// when one is required: a task hosted on Fargate that "pulls a container
// image from an Amazon ECR private repository" or "sends container logs to
// CloudWatch Logs using the awslogs log driver", and a task on Fargate or
// EC2 that "uses private registry authentication" or whose "task definition
// is referencing sensitive data using Secrets Manager secrets or AWS
// Systems Manager Parameter Store parameters". The messages are those ECS
// returns from RegisterTaskDefinition for each.
func checkExecutionRole(in *ecs.RegisterTaskDefinitionInput) error {
	if aws.ToString(in.ExecutionRoleArn) != "" {
		return nil
	}
	fargate := slices.Contains(in.RequiresCompatibilities, types.CompatibilityFargate)
	for _, c := range in.ContainerDefinitions {
		if len(c.Secrets) > 0 || c.LogConfiguration != nil && len(c.LogConfiguration.SecretOptions) > 0 {
			return clientError("When you are specifying container secrets, you must also specify a value for 'executionRoleArn'.")
		}
		if c.RepositoryCredentials != nil {
			return clientError("Private repository authentication requires that the task definition specify a value for executionRoleArn.")
		}
		if fargate && ecrRegistryRE.MatchString(aws.ToString(c.Image)) {
			return clientError("Fargate requires task definition to have execution role ARN to support ECR images.")
		}
		if fargate && c.LogConfiguration != nil && c.LogConfiguration.LogDriver == types.LogDriverAwslogs {
			return clientError("Fargate requires task definition to have execution role ARN to support log driver awslogs.")
		}
	}
	return nil
}
