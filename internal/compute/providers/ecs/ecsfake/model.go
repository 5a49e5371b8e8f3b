package ecsfake

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// The fake's state. Slices and pointers held here are never changed in
// place once stored, only replaced, so a description built from them can be
// handed out after the lock is released without copying deeply.

// Status values ECS uses for services, deployments and tasks.
const (
	statusActive   = "ACTIVE"
	statusDraining = "DRAINING"
	statusInactive = "INACTIVE"
	statusPrimary  = "PRIMARY"

	taskProvisioning = "PROVISIONING"
	taskPending      = "PENDING"
	taskRunning      = "RUNNING"
	taskStopped      = "STOPPED"
)

// cluster is a configured cluster and every service created in it that has
// not yet been forgotten.
type cluster struct {
	name, arn string
	services  []*service // in creation order; INACTIVE ones until retention ends
}

// service is one ECS service. A name deleted and created again is a new
// service with the same ARN.
type service struct {
	cluster *cluster
	// spec holds what the caller set and ECS echoes back; the fields that
	// change as the service runs are filled in by describe.
	spec    types.Service
	status  string
	desired int32
	// launchType is the launch type the service was created with, which an
	// empty capacity provider strategy returns it to.
	launchType types.LaunchType
	createdAt  time.Time
	drainingAt time.Time
	inactiveAt time.Time

	clientToken string
	fingerprint string // the create request, for clientToken idempotency
	lag         int    // describes left that report the service MISSING

	deployments   []*deployment // deployments[0] is PRIMARY
	lastCompleted *deployment   // what a circuit-breaker rollback returns to
	tasks         []*task       // not yet stopped
	stopped       []*task       // most recent last, at most maxStopped
	events        []types.ServiceEvent
	steady        bool // the steady-state event has been sent since the last change
}

// deployment is one rollout of a task definition and network configuration.
type deployment struct {
	id         string
	status     string // PRIMARY or ACTIVE
	def        *taskDef
	desired    int32
	failed     int32
	rollout    types.DeploymentRolloutState
	reason     string
	createdAt  time.Time
	updatedAt  time.Time
	network    *types.NetworkConfiguration
	launchType types.LaunchType
	capacity   []types.CapacityProviderStrategyItem
	platform   *string
}

// task is one task a deployment started.
type task struct {
	id, arn   string
	svc       *service
	dep       *deployment
	def       *taskDef
	status    string // PROVISIONING, PENDING, RUNNING or STOPPED
	since     time.Time
	createdAt time.Time
	startedAt time.Time
	stoppedAt time.Time
	version   int64

	stoppedReason   string
	stopCode        types.TaskStopCode
	containerReason string // set on the container whose image failed
	failedImage     string

	attachmentID, eni, subnet, ip string
	tags                          []types.Tag
}

// taskDef is one revision of a task definition family.
type taskDef struct {
	def  types.TaskDefinition
	tags []types.Tag
}

func (d *taskDef) arn() string { return *d.def.TaskDefinitionArn }

func (d *taskDef) active() bool { return d.def.Status == types.TaskDefinitionStatusActive }

func (d *taskDef) awsvpc() bool { return d.def.NetworkMode == types.NetworkModeAwsvpc }

func (svc *service) primary() *deployment { return svc.deployments[0] }

func (svc *service) name() string { return *svc.spec.ServiceName }

func (svc *service) arn() string { return *svc.spec.ServiceArn }

// live reports whether the service still counts toward its name: a new
// service of the same name cannot be created until this one is INACTIVE.
func (svc *service) live() bool { return svc.status != statusInactive }
