package ecsfake

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/google/uuid"
)

// maxStopped is how many stopped tasks per service the fake keeps for
// ListTasks and DescribeTasks; ECS keeps them for about an hour.
const maxStopped = 100

// startTask creates a task of deployment d in PROVISIONING.
func (s *Server) startTask(svc *service, d *deployment, now time.Time) *task {
	id := randomHex(16)
	t := &task{
		id:        id,
		arn:       s.arn("task/" + svc.cluster.name + "/" + id),
		svc:       svc,
		dep:       d,
		def:       d.def,
		status:    taskProvisioning,
		since:     now,
		createdAt: now,
		version:   1,
	}
	if d.def.awsvpc() && d.network != nil && d.network.AwsvpcConfiguration != nil {
		subnets := d.network.AwsvpcConfiguration.Subnets
		s.ipSeq++
		t.attachmentID = randomUUID()
		t.eni = "eni-" + randomHex(9)[:17]
		t.subnet = subnets[s.ipSeq%len(subnets)]
		t.ip = fmt.Sprintf("10.0.%d.%d", (s.ipSeq/254)%256, s.ipSeq%254+1)
	}
	switch svc.spec.PropagateTags {
	case types.PropagateTagsService:
		t.tags = svc.spec.Tags
	case types.PropagateTagsTaskDefinition:
		t.tags = d.def.tags
	}
	if svc.spec.EnableECSManagedTags {
		t.tags = append(append([]types.Tag(nil), t.tags...),
			types.Tag{Key: aws.String("aws:ecs:clusterName"), Value: aws.String(svc.cluster.name)},
			types.Tag{Key: aws.String("aws:ecs:serviceName"), Value: aws.String(svc.name())})
	}
	svc.tasks = append(svc.tasks, t)
	return t
}

// advanceTask moves a starting task on one state. A task whose image the
// test made fail stops where ECS's would, after PENDING.
func (s *Server) advanceTask(t *task, now time.Time) {
	switch t.status {
	case taskProvisioning:
		t.status, t.since = taskPending, now
		t.version++
	case taskPending:
		for _, c := range t.def.def.ContainerDefinitions {
			if reason, ok := s.failImages[aws.ToString(c.Image)]; ok {
				t.failedImage, t.containerReason = aws.ToString(c.Image), reason
				s.stopTask(t, now, reason, types.TaskStopCodeTaskFailedToStart)
				s.taskFailed(t.svc, t.dep, now)
				t.svc.event(now, "(task %s) failed to start: %s", t.id, reason)
				t.svc.steady = false
				return
			}
		}
		t.status, t.since, t.startedAt = taskRunning, now, now
		t.version++
	}
}

// stopTask stops a task at once and keeps it among the service's recently
// stopped tasks.
func (s *Server) stopTask(t *task, now time.Time, reason string, code types.TaskStopCode) {
	if t.status == taskStopped {
		return
	}
	t.status, t.since, t.stoppedAt = taskStopped, now, now
	t.stoppedReason, t.stopCode = reason, code
	t.version++
	svc := t.svc
	for i, live := range svc.tasks {
		if live == t {
			svc.tasks = append(svc.tasks[:i:i], svc.tasks[i+1:]...)
			break
		}
	}
	svc.stopped = append(svc.stopped, t)
	if n := len(svc.stopped); n > maxStopped {
		svc.stopped = append([]*task(nil), svc.stopped[n-maxStopped:]...)
	}
}

// describe builds the types.Task ECS would return.
func (t *task) describe(withTags bool) types.Task {
	d := t.dep
	desired := taskRunning
	if t.status == taskStopped {
		desired = taskStopped
	}
	health := types.HealthStatusUnknown
	out := types.Task{
		TaskArn:              aws.String(t.arn),
		ClusterArn:           aws.String(t.svc.cluster.arn),
		TaskDefinitionArn:    aws.String(t.def.arn()),
		Group:                aws.String("service:" + t.svc.name()),
		StartedBy:            aws.String(d.id),
		LaunchType:           d.launchType,
		LastStatus:           aws.String(t.status),
		DesiredStatus:        aws.String(desired),
		CreatedAt:            aws.Time(t.createdAt),
		Cpu:                  t.def.def.Cpu,
		Memory:               t.def.def.Memory,
		Version:              t.version,
		EnableExecuteCommand: t.svc.spec.EnableExecuteCommand,
		Connectivity:         types.ConnectivityConnected,
	}
	if len(d.capacity) > 0 {
		out.CapacityProviderName = d.capacity[0].CapacityProvider
	}
	if !t.startedAt.IsZero() {
		out.StartedAt = aws.Time(t.startedAt)
	}
	if t.status == taskStopped {
		out.StoppingAt = aws.Time(t.stoppedAt)
		out.StoppedAt = aws.Time(t.stoppedAt)
		out.StoppedReason = aws.String(t.stoppedReason)
		out.StopCode = t.stopCode
	}
	if t.ip != "" {
		out.Attachments = []types.Attachment{t.eniAttachment()}
	}
	for _, cd := range t.def.def.ContainerDefinitions {
		c := t.container(cd)
		if cd.HealthCheck != nil && t.status == taskRunning {
			health = types.HealthStatusHealthy
		}
		out.Containers = append(out.Containers, c)
	}
	out.HealthStatus = health
	if withTags {
		out.Tags = nonNil(t.tags)
	}
	return out
}

func (t *task) container(cd types.ContainerDefinition) types.Container {
	status := t.status
	if status == taskProvisioning {
		status = taskPending
	}
	c := types.Container{
		ContainerArn: aws.String(strings.Replace(t.arn, ":task/", ":container/", 1) + "/" + aws.ToString(cd.Name)),
		TaskArn:      aws.String(t.arn),
		Name:         cd.Name,
		Image:        cd.Image,
		LastStatus:   aws.String(status),
		HealthStatus: types.HealthStatusUnknown,
	}
	if cd.HealthCheck != nil && t.status == taskRunning {
		c.HealthStatus = types.HealthStatusHealthy
	}
	if t.ip != "" {
		c.NetworkInterfaces = []types.NetworkInterface{{AttachmentId: aws.String(t.attachmentID), PrivateIpv4Address: aws.String(t.ip)}}
	}
	if t.failedImage != "" && aws.ToString(cd.Image) == t.failedImage {
		c.Reason = aws.String(t.containerReason)
	}
	return c
}

func (t *task) eniAttachment() types.Attachment {
	status := "ATTACHED"
	switch t.status {
	case taskProvisioning:
		status = "PRECREATED"
	case taskStopped:
		status = "DELETED"
	}
	detail := func(k, v string) types.KeyValuePair {
		return types.KeyValuePair{Name: aws.String(k), Value: aws.String(v)}
	}
	return types.Attachment{
		Id:     aws.String(t.attachmentID),
		Type:   aws.String("ElasticNetworkInterface"),
		Status: aws.String(status),
		Details: []types.KeyValuePair{
			detail("subnetId", t.subnet),
			detail("networkInterfaceId", t.eni),
			detail("privateIPv4Address", t.ip),
		},
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func randomUUID() string { return uuid.NewString() }
