package ecsfake

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// nameRE is ECS's rule for family and service names: "Up to 255 letters
// (uppercase and lowercase), numbers, underscores, and hyphens are allowed."
// (API_RegisterTaskDefinition family, API_CreateService serviceName).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,255}$`)

func (s *Server) registerTaskDefinition(now time.Time, in *ecs.RegisterTaskDefinitionInput) (*ecs.RegisterTaskDefinitionOutput, error) {
	family := aws.ToString(in.Family)
	if !nameRE.MatchString(family) {
		return nil, clientError("Family contains invalid characters.")
	}
	if len(in.ContainerDefinitions) == 0 {
		return nil, clientError("Container list cannot be empty.")
	}
	if err := checkContainers(in.ContainerDefinitions); err != nil {
		return nil, err
	}
	cpu, err := normalizeUnits(in.Cpu, "vcpu", "cpu")
	if err != nil {
		return nil, err
	}
	memory, err := normalizeUnits(in.Memory, "gb", "memory")
	if err != nil {
		return nil, err
	}
	fargate := slices.Contains(in.RequiresCompatibilities, types.CompatibilityFargate)
	if fargate {
		if err := checkFargate(in.NetworkMode, cpu, memory); err != nil {
			return nil, err
		}
	}
	if err := checkRoles(in); err != nil {
		return nil, err
	}
	if err := checkExecutionRole(in); err != nil {
		return nil, err
	}
	if err := checkAwslogs(in.ContainerDefinitions, fargate); err != nil {
		return nil, err
	}
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	containers, err := containerDefaults(in.ContainerDefinitions, in.NetworkMode)
	if err != nil {
		return nil, err
	}

	revision := int32(len(s.families[family]) + 1)
	compat := []types.Compatibility{types.CompatibilityEc2}
	if in.NetworkMode == types.NetworkModeAwsvpc && checkFargate(in.NetworkMode, cpu, memory) == nil {
		compat = append(compat, types.CompatibilityFargate)
	}
	td := &taskDef{
		def: types.TaskDefinition{
			TaskDefinitionArn:       aws.String(s.arn("task-definition/" + family + ":" + strconv.Itoa(int(revision)))),
			Family:                  aws.String(family),
			Revision:                revision,
			ContainerDefinitions:    containers,
			Cpu:                     cpu,
			Memory:                  memory,
			NetworkMode:             in.NetworkMode,
			RequiresCompatibilities: in.RequiresCompatibilities,
			Compatibilities:         compat,
			ExecutionRoleArn:        in.ExecutionRoleArn,
			TaskRoleArn:             in.TaskRoleArn,
			Volumes:                 in.Volumes,
			PlacementConstraints:    in.PlacementConstraints,
			PidMode:                 in.PidMode,
			IpcMode:                 in.IpcMode,
			ProxyConfiguration:      in.ProxyConfiguration,
			EphemeralStorage:        in.EphemeralStorage,
			RuntimePlatform:         in.RuntimePlatform,
			EnableFaultInjection:    in.EnableFaultInjection,
			Status:                  types.TaskDefinitionStatusActive,
			RegisteredAt:            aws.Time(now),
			RegisteredBy:            aws.String("arn:aws:iam::" + s.Account + ":root"),
		},
		tags: in.Tags,
	}
	s.families[family] = append(s.families[family], td)
	return &ecs.RegisterTaskDefinitionOutput{TaskDefinition: &td.def, Tags: td.tags}, nil
}

func (s *Server) deregisterTaskDefinition(now time.Time, in *ecs.DeregisterTaskDefinitionInput) (*ecs.DeregisterTaskDefinitionOutput, error) {
	family, rev, err := s.parseTaskDefRef(aws.ToString(in.TaskDefinition))
	if err != nil {
		return nil, err
	}
	if rev == 0 {
		return nil, clientError("Invalid revision number. Number: %s", aws.ToString(in.TaskDefinition))
	}
	td := s.revision(family, rev)
	if td == nil {
		return nil, clientError("The specified task definition does not exist.")
	}
	if td.active() {
		def := td.def
		def.Status = types.TaskDefinitionStatusInactive
		def.DeregisteredAt = aws.Time(now)
		td.def = def
	}
	return &ecs.DeregisterTaskDefinitionOutput{TaskDefinition: &td.def}, nil
}

func (s *Server) describeTaskDefinition(_ time.Time, in *ecs.DescribeTaskDefinitionInput) (*ecs.DescribeTaskDefinitionOutput, error) {
	td, err := s.resolveTaskDef(aws.ToString(in.TaskDefinition))
	if err != nil || td == nil {
		return nil, clientError("Unable to describe task definition.")
	}
	out := &ecs.DescribeTaskDefinitionOutput{TaskDefinition: &td.def}
	if slices.Contains(in.Include, types.TaskDefinitionFieldTags) {
		out.Tags = nonNil(td.tags)
	}
	return out, nil
}

// parseTaskDefRef splits "family", "family:rev" or a task definition ARN.
// A revision of 0 means none was given.
func (s *Server) parseTaskDefRef(ref string) (family string, rev int32, err error) {
	if rest, ok := strings.CutPrefix(ref, "arn:"); ok {
		i := strings.Index(rest, ":task-definition/")
		if i < 0 {
			return "", 0, clientError("Invalid task definition ARN %q.", ref)
		}
		ref = rest[i+len(":task-definition/"):]
	}
	family, revText, hasRev := strings.Cut(ref, ":")
	if !nameRE.MatchString(family) {
		return "", 0, clientError("Family contains invalid characters.")
	}
	if !hasRev {
		return family, 0, nil
	}
	n, convErr := strconv.Atoi(revText)
	if convErr != nil || n < 1 {
		return "", 0, invalidParameter("Invalid revision number. Number: %s", revText)
	}
	return family, int32(n), nil
}

// resolveTaskDef finds what a taskDefinition parameter names. A family alone
// means its latest ACTIVE revision; nil without an error means none.
func (s *Server) resolveTaskDef(ref string) (*taskDef, error) {
	family, rev, err := s.parseTaskDefRef(ref)
	if err != nil {
		return nil, err
	}
	if rev != 0 {
		return s.revision(family, rev), nil
	}
	revs := s.families[family]
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].active() {
			return revs[i], nil
		}
	}
	return nil, nil
}

func (s *Server) revision(family string, rev int32) *taskDef {
	revs := s.families[family]
	if rev < 1 || int(rev) > len(revs) {
		return nil
	}
	return revs[rev-1]
}

// normalizeUnits turns a task-level cpu or memory value into the integer
// string ECS stores: "1 vCPU" is "1024" and "2 GB" is "2048".
func normalizeUnits(v *string, unit, field string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	text := strings.TrimSpace(*v)
	lower := strings.ToLower(text)
	if num, ok := strings.CutSuffix(lower, unit); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f <= 0 {
			return nil, clientError("Invalid '%s' setting for task: %s.", field, text)
		}
		return aws.String(strconv.Itoa(int(f * 1024))), nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n <= 0 {
		return nil, clientError("Invalid '%s' setting for task: %s.", field, text)
	}
	return aws.String(strconv.Itoa(n)), nil
}

// fargateMemory lists, for each Fargate task cpu value, the memory range and
// step it allows (MiB).
var fargateMemory = map[int]struct{ lo, hi, step int }{
	256:   {512, 2048, 0}, // 512, 1024 or 2048 only
	512:   {1024, 4096, 1024},
	1024:  {2048, 8192, 1024},
	2048:  {4096, 16384, 1024},
	4096:  {8192, 30720, 1024},
	8192:  {16384, 61440, 4096},
	16384: {32768, 122880, 8192},
}

// checkFargate applies Fargate's rules to a task definition that requires it.
func checkFargate(mode types.NetworkMode, cpu, memory *string) error {
	if mode != types.NetworkModeAwsvpc {
		return clientError("Fargate only supports network mode 'awsvpc'.")
	}
	if cpu == nil {
		return clientError("Fargate requires that 'cpu' be defined at the task level.")
	}
	if memory == nil {
		return clientError("Fargate requires that 'memory' be defined at the task level.")
	}
	c, _ := strconv.Atoi(*cpu)
	m, _ := strconv.Atoi(*memory)
	r, ok := fargateMemory[c]
	valid := ok && m >= r.lo && m <= r.hi
	if valid && r.step == 0 {
		valid = m == 512 || m == 1024 || m == 2048
	} else if valid {
		valid = (m-r.lo)%r.step == 0
	}
	if !valid {
		return clientError("No Fargate configuration exists for given values: %s CPU, %s memory. See the Amazon ECS documentation for the valid values.", *cpu, *memory)
	}
	return nil
}

// nonNil makes an absent list an empty one, for answers where ECS always
// sends the member.
func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
