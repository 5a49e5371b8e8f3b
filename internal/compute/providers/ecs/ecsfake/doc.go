// Package ecsfake is a fake Amazon ECS endpoint for tests. The real SDK
// client (github.com/aws/aws-sdk-go-v2/service/ecs) talks to it over the
// real wire protocol, so a provider is tested with the code it runs in
// production, down to request serialization, error decoding and retries.
//
// Start one per test with Start, or serve New(opts).Handler() on an address
// for a separate process. Server.Client returns an SDK client pointed at it.
//
// # What is faithful to ECS
//
//   - The protocol: AWS JSON 1.1 (POST /, X-Amz-Target
//     AmazonEC2ContainerServiceV20141113.<Operation>), a SigV4 Authorization
//     header and X-Amz-Date on every request (credential scope checked for
//     the region and service, signature not verified), x-amzn-RequestId on
//     every response, errors as {"__type", "message"} with ECS's HTTP
//     statuses, so the SDK returns its typed errors and retries what it
//     would retry.
//   - Request shapes: bodies are decoded into the SDK's own input structs
//     and a member the SDK does not know is an InvalidParameterException.
//     Answers are the SDK's output structs written as ECS writes them
//     (lowerCamel members, epoch-second timestamps).
//   - The fourteen operations a provider and its tests need: CreateService,
//     UpdateService, DeleteService, DescribeServices, ListServices,
//     RegisterTaskDefinition, DeregisterTaskDefinition,
//     DescribeTaskDefinition, ListTaskDefinitions, ListTasks, DescribeTasks,
//     StopTask, TagResource and DescribeClusters, with ECS's validation
//     and, where known, its error codes and messages: clientToken
//     idempotency, names unique among ACTIVE and DRAINING services, the
//     awsvpc and Fargate rules, Fargate cpu/memory pairs, task definition
//     revisions and INACTIVE ones, DRAINING then INACTIVE after delete, and
//     DescribeServices reporting MISSING (optionally for a while after
//     create, as ECS's eventual consistency can).
//   - What RegisterTaskDefinition refuses, with ECS's ClientException
//     messages where they are known: container names and images outside
//     API_ContainerDefinition's characters and 255-character limit; task
//     and execution roles that are neither an IAM role ARN nor a role name
//     ("Role is not valid"); a missing executionRoleArn where the "Amazon
//     ECS task execution IAM role" page requires one (an ECR image or the
//     awslogs driver on Fargate, container secrets or log secretOptions,
//     private registry credentials); awslogs without awslogs-region or
//     awslogs-group, with a log group name CloudWatch Logs would refuse,
//     awslogs-create-group other than "true", or on Fargate without
//     awslogs-stream-prefix (API_LogConfiguration). containers.go and
//     awslogs.go quote each page.
//   - Tags as API_Tag has them, for CreateService, RegisterTaskDefinition
//     and TagResource alike: at most 50 on a resource (TagResource counts
//     the merged set), keys of 1–128 and values of 0–256 characters drawn
//     from letters, numbers, spaces and + - = . _ : / @, no aws: key prefix
//     in any case.
//   - A service's awsvpc configuration: required for an awsvpc task
//     definition, refused for others, at most 16 subnets and 5 security
//     groups (API_AwsVpcConfiguration).
//   - UpdateService as its reference page describes each member: left out,
//     a member keeps the service's value (desiredCount, loadBalancers,
//     serviceRegistries, networkConfiguration, …); an empty list of load
//     balancers or service registries removes them, an empty capacity
//     provider strategy returns the service to its launch type; a changed
//     task definition, network configuration, platform version, load
//     balancers or service registries starts a new deployment. Each rule
//     in services.go quotes the page.
//   - What ECS fills in: a registered container is essential, its port
//     mappings tcp with the container port as host port under awsvpc, its
//     health check 30s/5s/3 retries unless told; a Fargate service runs
//     platform version LATEST unless told. The tests, and a provider
//     comparing what it wrote with what it reads, meet them as on ECS.
//   - Request throttling, when Options.Throttling is set: ECS's token
//     buckets per API action category, with DocumentedRates the
//     capacities and refill rates of "Request throttling for the Amazon
//     ECS API", refilled from the fake's clock, refusing with
//     ThrottlingException "Rate exceeded" (HTTP 400). Server.Throttled
//     counts the refusals.
//   - Tests change a service behind a provider's back through the same
//     API, as the AWS CLI would: Server.Client's UpdateService,
//     RegisterTaskDefinition, DeleteService and StopTask.
//   - Services run: each deployment's tasks go PROVISIONING, PENDING,
//     RUNNING; a new deployment replaces the old once its tasks run; events
//     say what happened in ECS's words; tasks whose image FailImage marks
//     stop with TaskFailedToStart and are replaced, and the deployment
//     circuit breaker (threshold max(3, ⌈desired/2⌉), at most 200) fails
//     the deployment and, with rollback, returns to the last completed one.
//
// # What is simplified
//
//   - Time moves only when a request or an inspection method arrives; each
//     task state takes Options.StepTime. There is no placement: every task
//     finds capacity at once, so "unable to place a task" never happens.
//   - Rolling updates behave as minimumHealthyPercent 100: the old
//     deployment's tasks stop all together once the new one's are running,
//     whatever deploymentConfiguration says (it is stored and echoed).
//   - Load balancers, service registries and health check grace periods are
//     stored and echoed (and start deployments) but nothing checks target
//     health or that the container and port exist; a container with a
//     healthCheck is HEALTHY as soon as it runs.
//   - StopTask stops a task at once, without ECS's SIGTERM and 30-second
//     grace.
//   - The "failed to start" service event is the fake's own wording; ECS
//     puts the detail only on the stopped task.
//   - Only FARGATE and FARGATE_SPOT capacity providers exist; the cluster
//     set is fixed at construction.
//   - Throttling is off unless Options.Throttling is set, and then keyed
//     by operation only: the fake is one account in one region.
//
// # What it does not check
//
// The fake knows nothing outside ECS, so what ECS checks against other
// services, or only when a task starts, passes here:
//
//   - IAM: no signature is verified and no permission is checked; a role
//     ARN or name of the right form is accepted whether or not the role
//     exists, trusts ecs-tasks.amazonaws.com, or grants what the task
//     needs (ECS answers "Role is not valid" for a role it cannot assume;
//     a task whose execution role lacks ecr:GetAuthorizationToken,
//     logs:CreateLogStream or secretsmanager:GetSecretValue fails to start
//     on ECS and runs here).
//   - Images: an image of the right form always pulls unless FailImage
//     says otherwise; no repository, tag or digest is looked up, and an ECR
//     image in another account or region is not told apart.
//   - Secrets and parameters: a secret's valueFrom and a repository
//     credentialsParameter are not resolved, so a missing secret, a
//     missing JSON key or version in it, or a parameter in another region
//     does not stop a task.
//   - Logs: the log group need not exist (awslogs-create-group is not
//     acted on), awslogs-region need not be a region, and options beyond
//     those above are not checked against the driver: ECS refuses some
//     ("Log driver awslogs disallows options: …") but its list is not
//     documented. Fargate's limit to the awslogs, splunk and awsfirelens
//     drivers is not applied.
//   - Networking: subnets and security groups are not looked up, need not
//     be in one VPC, and assignPublicIp is not checked against the subnet
//     or launch type; load balancer target groups and service registries
//     are not looked up either.
//   - Task definitions: only the members above are validated. Container
//     cpu and memory against the task's, duplicate container names,
//     dependsOn and links naming real containers, port mapping conflicts,
//     volumes and mount points, ephemeral storage limits and the runtime
//     platform against Fargate's are not checked.
//   - Tag values starting with aws: are accepted, though API_Tag reserves
//     the prefix for values too, because it is not known that ECS refuses
//     them; ECS's messages for tag refusals are not known either, so the
//     fake's are its own.
//   - Quotas other than request rates: services per cluster, tasks per
//     service, task definition revisions per family and the like.
//
// # Test aids that are not ECS behaviour
//
// FailNext injects an error, FailImage fails an image's tasks,
// MalformNext makes answers the SDK cannot read (as a non-conforming
// emulator sends them), and the inspection methods (Services, Tasks,
// StopTask, DeleteServiceOutOfBand, Advance) read and change the state
// without an API call.
package ecsfake
