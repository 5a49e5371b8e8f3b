package ecsfake

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

const (
	ecrImage = "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:1"
	execRole = "arn:aws:iam::123456789012:role/ecsTaskExecutionRole"
)

// awslogs is a container log configuration with the options given, nil
// options meaning the three a Fargate task needs.
func awslogs(options map[string]string) *types.LogConfiguration {
	if options == nil {
		options = map[string]string{"awslogs-group": "/ecs/app", "awslogs-region": "us-west-2", "awslogs-stream-prefix": "ecs"}
	}
	return &types.LogConfiguration{LogDriver: types.LogDriverAwslogs, Options: options}
}

// TestRegistrationRules registers a Fargate task definition changed one way
// at a time and wants ECS's refusal, or none where ECS accepts it.
func TestRegistrationRules(t *testing.T) {
	container := func(f func(*types.ContainerDefinition)) func(*ecs.RegisterTaskDefinitionInput) {
		return func(in *ecs.RegisterTaskDefinitionInput) { f(&in.ContainerDefinitions[0]) }
	}
	withRole := func(in *ecs.RegisterTaskDefinitionInput) { in.ExecutionRoleArn = aws.String(execRole) }
	ec2Only := func(in *ecs.RegisterTaskDefinitionInput) {
		in.RequiresCompatibilities, in.NetworkMode, in.Cpu, in.Memory = nil, "", nil, nil
	}
	tests := []struct {
		name    string
		changes []func(*ecs.RegisterTaskDefinitionInput)
		wantErr string // "" for accepted
	}{
		// Execution role (task_execution_IAM_role).
		{"ECR image on Fargate without execution role", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.Image = aws.String(ecrImage) }),
		}, "Fargate requires task definition to have execution role ARN to support ECR images."},
		{"ECR FIPS image", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) {
				c.Image = aws.String("123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/app@sha256:" + strings.Repeat("ab", 32))
			}),
		}, "support ECR images."},
		{"ECR China image", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) {
				c.Image = aws.String("123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/app")
			}),
		}, "support ECR images."},
		{"ECR image with execution role", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.Image = aws.String(ecrImage) }), withRole,
		}, ""},
		{"ECR image on EC2 without execution role", []func(*ecs.RegisterTaskDefinitionInput){
			ec2Only, container(func(c *types.ContainerDefinition) { c.Image = aws.String(ecrImage) }),
		}, ""},
		{"public image with a registry host", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.Image = aws.String("public.ecr.aws/nginx/nginx:1") }),
		}, ""},
		{"secrets without execution role", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) {
				c.Secrets = []types.Secret{{Name: aws.String("DB"), ValueFrom: aws.String("arn:aws:ssm:us-west-2:123456789012:parameter/db")}}
			}),
		}, "When you are specifying container secrets, you must also specify a value for 'executionRoleArn'."},
		{"secrets on EC2 without execution role", []func(*ecs.RegisterTaskDefinitionInput){
			ec2Only, container(func(c *types.ContainerDefinition) {
				c.Secrets = []types.Secret{{Name: aws.String("DB"), ValueFrom: aws.String("db")}}
			}),
		}, "you must also specify a value for 'executionRoleArn'."},
		{"log secret options without execution role", []func(*ecs.RegisterTaskDefinitionInput){
			ec2Only, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = &types.LogConfiguration{LogDriver: types.LogDriverSplunk,
					SecretOptions: []types.Secret{{Name: aws.String("splunk-token"), ValueFrom: aws.String("token")}}}
			}),
		}, "you must also specify a value for 'executionRoleArn'."},
		{"secrets with execution role", []func(*ecs.RegisterTaskDefinitionInput){
			withRole, container(func(c *types.ContainerDefinition) {
				c.Secrets = []types.Secret{{Name: aws.String("DB"), ValueFrom: aws.String("db")}}
			}),
		}, ""},
		{"private registry credentials without execution role", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) {
				c.RepositoryCredentials = &types.RepositoryCredentials{CredentialsParameter: aws.String("arn:aws:secretsmanager:us-west-2:123456789012:secret:reg")}
			}),
		}, "Private repository authentication requires that the task definition specify a value for executionRoleArn."},
		{"awslogs on Fargate without execution role", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.LogConfiguration = awslogs(nil) }),
		}, "Fargate requires task definition to have execution role ARN to support log driver awslogs."},
		{"awslogs on EC2 without execution role", []func(*ecs.RegisterTaskDefinitionInput){
			ec2Only, container(func(c *types.ContainerDefinition) { c.LogConfiguration = awslogs(nil) }),
		}, ""},

		// Roles.
		{"execution role not a role", []func(*ecs.RegisterTaskDefinitionInput){
			func(in *ecs.RegisterTaskDefinitionInput) {
				in.ExecutionRoleArn = aws.String("arn:aws:iam::123456789012:user/deployer")
			},
		}, "Role is not valid"},
		{"task role of another service", []func(*ecs.RegisterTaskDefinitionInput){
			func(in *ecs.RegisterTaskDefinitionInput) { in.TaskRoleArn = aws.String("arn:aws:s3:::bucket") },
		}, "Role is not valid"},
		{"task role with a space", []func(*ecs.RegisterTaskDefinitionInput){
			func(in *ecs.RegisterTaskDefinitionInput) { in.TaskRoleArn = aws.String("my role") },
		}, "Role is not valid"},
		{"task role short name and execution role with a path", []func(*ecs.RegisterTaskDefinitionInput){
			func(in *ecs.RegisterTaskDefinitionInput) {
				in.TaskRoleArn = aws.String("app-task")
				in.ExecutionRoleArn = aws.String("arn:aws:iam::123456789012:role/service-role/exec+1@x")
			},
		}, ""},
		{"GovCloud role", []func(*ecs.RegisterTaskDefinitionInput){
			func(in *ecs.RegisterTaskDefinitionInput) {
				in.TaskRoleArn = aws.String("arn:aws-us-gov:iam::123456789012:role/app")
			},
		}, ""},

		// Container name and image (API_ContainerDefinition).
		{"container name with a space", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.Name = aws.String("my app") }),
		}, "Container.name contains invalid characters."},
		{"container name of 256", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.Name = aws.String(strings.Repeat("a", 256)) }),
		}, "Container.name contains invalid characters."},
		{"container name of 255", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.Name = aws.String(strings.Repeat("a", 255)) }),
		}, ""},
		{"image of 256", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.Image = aws.String("r/" + strings.Repeat("a", 254)) }),
		}, "Container.image contains invalid characters."},
		{"image with a space", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.Image = aws.String("nginx latest") }),
		}, "Container.image contains invalid characters."},
		{"image digest not sha256", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) { c.Image = aws.String("nginx@md5:abc") }),
		}, "Container.image contains invalid characters."},
		{"image with port, tag and digest", []func(*ecs.RegisterTaskDefinitionInput){
			container(func(c *types.ContainerDefinition) {
				c.Image = aws.String(strings.Repeat("r", 200) + ":5000/team/app@sha256:" + strings.Repeat("0F", 32))
			}),
		}, ""},

		// awslogs options (API_LogConfiguration).
		{"awslogs without region and group", []func(*ecs.RegisterTaskDefinitionInput){
			withRole, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-stream-prefix": "ecs"})
			}),
		}, "Log driver awslogs requires options: awslogs-region, awslogs-group"},
		{"awslogs without region on EC2", []func(*ecs.RegisterTaskDefinitionInput){
			ec2Only, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-group": "g"})
			}),
		}, "Log driver awslogs requires options: awslogs-region"},
		{"awslogs empty group", []func(*ecs.RegisterTaskDefinitionInput){
			withRole, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-group": "", "awslogs-region": "us-west-2", "awslogs-stream-prefix": "ecs"})
			}),
		}, "Log driver awslogs option 'awslogs-group' should not be null or empty."},
		{"awslogs group that is an ARN", []func(*ecs.RegisterTaskDefinitionInput){
			withRole, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-group": "arn:aws:logs:us-west-2:123456789012:log-group:/ecs/app", "awslogs-region": "us-west-2", "awslogs-stream-prefix": "ecs"})
			}),
		}, "Log driver awslogs option 'awslogs-group' contains invalid characters."},
		{"awslogs group of 513", []func(*ecs.RegisterTaskDefinitionInput){
			withRole, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-group": strings.Repeat("g", 513), "awslogs-region": "us-west-2", "awslogs-stream-prefix": "ecs"})
			}),
		}, "Log driver awslogs option 'awslogs-group' contains invalid characters."},
		{"awslogs create-group false", []func(*ecs.RegisterTaskDefinitionInput){
			withRole, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-group": "/ecs/app", "awslogs-region": "us-west-2", "awslogs-stream-prefix": "ecs", "awslogs-create-group": "false"})
			}),
		}, "Log driver awslogs option 'awslogs-create-group' should only be set to 'true', else omit option."},
		{"awslogs without stream prefix on Fargate", []func(*ecs.RegisterTaskDefinitionInput){
			withRole, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-group": "/ecs/app", "awslogs-region": "us-west-2"})
			}),
		}, "Fargate requires log configuration options to include awslogs-stream-prefix to support log driver awslogs."},
		{"awslogs without stream prefix on EC2", []func(*ecs.RegisterTaskDefinitionInput){
			ec2Only, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-group": "/ecs/app", "awslogs-region": "us-west-2"})
			}),
		}, ""},
		{"awslogs stream prefix with a colon", []func(*ecs.RegisterTaskDefinitionInput){
			withRole, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-group": "/ecs/app", "awslogs-region": "us-west-2", "awslogs-stream-prefix": "app:v1"})
			}),
		}, "Log driver awslogs option 'awslogs-stream-prefix' contains invalid characters."},
		{"awslogs complete", []func(*ecs.RegisterTaskDefinitionInput){
			withRole, container(func(c *types.ContainerDefinition) {
				c.LogConfiguration = awslogs(map[string]string{"awslogs-group": "/ecs/app#1_x-y.z", "awslogs-region": "us-west-2", "awslogs-stream-prefix": "tenant/app", "awslogs-create-group": "true"})
			}),
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newFake(t, Options{})
			in := &ecs.RegisterTaskDefinitionInput{Family: aws.String("app"), ContainerDefinitions: oneContainer("nginx")}
			fargate(in)
			for _, change := range tt.changes {
				change(in)
			}
			_, err := c.RegisterTaskDefinition(context.Background(), in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("RegisterTaskDefinition: %v, want accepted", err)
				}
				return
			}
			var ce *types.ClientException
			if !errors.As(err, &ce) || !strings.Contains(ce.ErrorMessage(), tt.wantErr) {
				t.Fatalf("RegisterTaskDefinition: %v, want ClientException %q", err, tt.wantErr)
			}
		})
	}
}
