// Package ecs is the compute provider that runs each tenant as one AWS ECS
// service, through the AWS SDK for Go v2 (github.com/aws/aws-sdk-go-v2/service/ecs).
//
// The service is named <service_name_prefix><tenant name> (shortened with a
// hash past ECS's 255 characters) in the tenant's cluster_arn, tagged
// landlord:tenant-id, landlord:tenant-name, landlord:managed-by=landlord,
// landlord:generation and landlord:config-hash (an HMAC-SHA256, keyed with
// the install's key, of the service as landlord set it), with tags
// propagated to its tasks. A config with a portable workload (image,
// command, env, ports, health check, resources, secrets) gets a task
// definition family of the same name, built over task_definition_arn when
// one is given; a revision is registered only when the task definition
// changes, and is tagged with a fingerprint so that a retry after a crash
// finds it instead of registering another. A config without an image runs
// task_definition_arn as it is.
//
// Nothing is kept in memory that is needed to finish: the service is found
// by name and checked by tag, so a restarted landlord adopts it. CreateService
// carries a client token derived from the tenant id and generation, so a
// create retried after a crash is answered with the service the first one
// made. A service of the name that is not tagged with the tenant's id is a
// conflict, never taken over; one still draining after a delete is waited
// out (Settings.DrainWait) before a new one is created.
//
// Update (and Provision of a live service) compares the service as ECS
// describes it with what landlord sets, field by field, never trusting the
// config-hash tag: a change made by hand is put back. An UpdateService
// carries only the members that differ (a change of the count alone sends
// the count and starts no deployment). A member left out keeps the
// service's value, so what the config drops is sent empty: load balancers and service registries as empty lists (the
// SDK sends an empty, non-nil slice as []), a capacity provider strategy
// as an empty list, a grace period as 0. A desired_count range
// ({"min", "max"}) leaves the count to ECS service auto scaling: the
// service starts at min and desiredCount is never sent again.
//
// The provider is a provider.DriftDetector: Inspect reports every field
// that differs from the spec (see drift.go for the paths) and changes
// nothing. It is not a ChangeNotifier; drift is found at the controller's
// resync (see drift.go for what an EventBridge notifier would need).
//
// Status reads of one cluster at once share their DescribeServices (10
// services a call) and DescribeTasks (100 tasks) calls (reads.go), every
// page of a service's tasks is read, and a service that runs the tasks it
// ran at its last listing is not listed again.
//
// Provision and Update return as soon as ECS has the request; GetStatus
// reports running only when the primary deployment's rollout has completed
// and its tasks run, and failed when the deployment circuit breaker stopped
// the rollout, with the reason and the last stopped task's stoppedReason.
// Destroy scales the service to 0, deletes it with force and deregisters
// the revisions registered for the tenant.
//
// Tenants may each name their own cluster, region, endpoint or role, and
// ECS cannot search services by tag across them, so the provider is a
// provider.Locator: the Manager hands it the tenant as recorded (name,
// config, the service ARN of the last result). GetStatus and Destroy by id
// alone look where the tenant was last seen, then scan the default
// cluster.
//
// The revision a service ran before a change of its task definition stays
// registered for the deployment circuit breaker's rollback, and is
// deregistered at the next change; Destroy deregisters all.
//
// What ECS would refuse at RegisterTaskDefinition or CreateService is
// refused first, at the config's field with AWS's reason (rules.go): an ECR
// image on Fargate, secrets or awslogs on Fargate without
// execution_role_arn, tags outside AWS's rules, and the like. With an
// execution role and no log configuration, tasks log to CloudWatch
// (awslogs, group /ecs/<service name>).
//
// Secrets must be references (SSM Parameter Store or Secrets Manager
// ARNs), which ECS resolves when a task starts: ECS shows a task
// definition's environment to anyone who may describe it, so a plain value
// is refused. Errors are mapped to the compute sentinels: throttling and
// ECS's own failures are retryable (after the SDK's adaptive retries),
// invalid parameters, access denied and a missing cluster are terminal,
// with AWS's message and request id.
//
// The provider is proven against ecsfake, a fake ECS endpoint in this
// repository that speaks the real wire protocol to the real SDK; see
// docs/compute-providers.md for what that does and does not prove.
package ecs
