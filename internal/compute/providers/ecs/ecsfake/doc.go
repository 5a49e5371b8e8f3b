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
package ecsfake
