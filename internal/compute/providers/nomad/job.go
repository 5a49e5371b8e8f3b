package nomad

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// secretsFile is where a task's secret values are rendered, inside the
// task's secrets directory (a tmpfs no other task sees), as an env file
// Nomad reads into the task's environment.
const secretsFile = "secrets/landlord.env"

// desired is what a spec asks of Nomad: the job, and the secret values of
// each task, by Variable path.
type desired struct {
	job     *api.Job
	id      string
	secrets map[string]map[string]string // Variable path → name → value
	ports   []port
	hash    string
}

// desiredOf builds the tenant's job from a resolved spec.
func (p *Provider) desiredOf(spec *provider.TenantComputeSpec, jobID string) *desired {
	o := optionsOf(spec)
	d := &desired{id: jobID, ports: portsOf(spec.Workload), secrets: map[string]map[string]string{}}
	for _, s := range spec.Secrets {
		path := secretsPath(jobID, s.Container)
		if d.secrets[path] == nil {
			d.secrets[path] = map[string]string{}
		}
		d.secrets[path][s.Name] = s.Value.Reveal()
	}

	tg := &api.TaskGroup{Name: new(group), Count: new(o.count().initial()), Scaling: o.count().scaling(),
		Update: updateOf(o.Update), RestartPolicy: restartOf(o.Restart)}
	network := &api.NetworkResource{Mode: "host"}
	for _, pt := range d.ports {
		np := api.Port{Label: pt.label, To: pt.containerPort, Value: pt.hostPort}
		if o.driver() == DriverRawExec {
			// The process listens on the node: the port is its own.
			np = api.Port{Label: pt.label, Value: pt.containerPort}
		}
		if np.Value != 0 {
			network.ReservedPorts = append(network.ReservedPorts, np)
		} else {
			network.DynamicPorts = append(network.DynamicPorts, np)
		}
	}
	if len(d.ports) > 0 {
		tg.Networks = []*api.NetworkResource{network}
	}
	for i, c := range spec.Containers {
		task := p.taskOf(o, c, jobID, spec.TenantID)
		task.Leader = i == 0 && len(spec.Containers) > 1
		if path := secretsPath(jobID, c.Name); d.secrets[path] != nil {
			task.Templates = []*api.Template{secretsTemplate(path)}
		}
		tg.Tasks = append(tg.Tasks, task)
		tg.Services = append(tg.Services, servicesOf(o, c, jobID, d.ports)...)
	}

	job := &api.Job{
		ID: new(jobID), Name: new(jobID), Type: new(api.JobTypeService),
		Datacenters: o.Datacenters,
		TaskGroups:  []*api.TaskGroup{tg},
		Meta:        maps.Clone(o.Meta),
	}
	if len(job.Datacenters) == 0 {
		job.Datacenters = []string{"*"}
	}
	if o.NodePool != "" {
		job.NodePool = new(o.NodePool)
	}
	if p.settings.Region != "" {
		job.Region = new(p.settings.Region)
	}
	job.Namespace = new(p.settings.Namespace)
	for _, c := range o.Constraints {
		job.Constraints = append(job.Constraints, api.NewConstraint(c.Attribute, c.Operator, c.Value))
	}
	if job.Meta == nil {
		job.Meta = map[string]string{}
	}
	job.Meta[metaManagedBy] = managedBy
	job.Meta[metaTenantID] = spec.TenantID
	job.Meta[metaTenantName] = spec.TenantName
	if len(d.ports) > 0 {
		job.Meta[metaPorts] = encodePorts(d.ports)
	}
	// The fingerprint covers the job as built (so a change of landlord's
	// settings counts) and the secret values it refers to, but not the
	// generation: a new generation with nothing to change writes nothing.
	d.hash = p.fingerprint(job, d.secrets)
	job.Meta[metaConfigHash] = d.hash
	job.Meta[metaGeneration] = strconv.FormatInt(spec.Generation, 10)
	d.job = job
	return d
}

// fingerprint is an HMAC-SHA256, keyed with the install's key, of the job
// and the secret values.
func (p *Provider) fingerprint(job *api.Job, secrets map[string]map[string]string) string {
	b, err := json.Marshal(struct {
		Job     *api.Job
		Secrets map[string]map[string]string
	}{job, secrets})
	if err != nil {
		panic(fmt.Sprintf("nomad: fingerprint: %v", err)) // a job and strings always marshal
	}
	return provider.Fingerprint(p.hashKey, b)[:32]
}

// taskOf is the task of one container.
func (p *Provider) taskOf(o tenantOptions, c workload.ContainerSpec, jobID, tenantID string) *api.Task {
	task := &api.Task{Name: c.Name, Driver: o.driver(), Env: maps.Clone(c.Env)}
	var labels []string
	for _, pt := range portsOf(workload.Workload{Containers: []workload.ContainerSpec{c}}) {
		labels = append(labels, pt.label)
	}
	switch o.driver() {
	case DriverRawExec:
		task.Config = map[string]any{"command": c.Command[0]}
		if args := append(slices.Clone(c.Command[1:]), c.Args...); len(args) > 0 {
			task.Config["args"] = args
		}
	default:
		task.Config = map[string]any{"image": c.Image}
		if len(c.Command) > 0 {
			task.Config["entrypoint"] = slices.Clone(c.Command)
		}
		if len(c.Args) > 0 {
			task.Config["args"] = slices.Clone(c.Args)
		}
		if len(labels) > 0 {
			task.Config["ports"] = labels
		}
		// Block-valued driver options are lists of maps in the API's form.
		task.Config["labels"] = []map[string]string{{labelJob: jobID, labelTenantID: tenantID}}
	}
	if r := c.Resources; r.CPUMillicores > 0 || r.MemoryMiB > 0 {
		task.Resources = &api.Resources{}
		if r.CPUMillicores > 0 {
			task.Resources.CPU = new(int(max(1, r.CPUMillicores*int64(p.settings.MHzPerCore)/1000)))
		}
		if r.MemoryMiB > 0 {
			task.Resources.MemoryMB = new(int(r.MemoryMiB))
		}
	}
	return task
}

// secretsTemplate renders the Variable at path as an env file. Values are
// JSON strings, which Nomad's env file parser unquotes. A changed value
// comes with a new job version (the fingerprint in the meta changes), so
// running tasks are not restarted by the template itself.
func secretsTemplate(path string) *api.Template {
	data := `{{ with nomadVar "` + path + `" }}{{ range .Tuples }}{{ .K }}={{ .V | toJSON }}` + "\n" + `{{ end }}{{ end }}`
	return &api.Template{EmbeddedTmpl: new(data), DestPath: new(secretsFile), Envvars: new(true), ChangeMode: new("noop"),
		Perms: new("0400")}
}

// servicesOf registers each published port of a container as a service,
// carrying the container's health check on the port it probes.
func servicesOf(o tenantOptions, c workload.ContainerSpec, jobID string, ports []port) []*api.Service {
	var out []*api.Service
	for _, pt := range ports {
		if pt.container != c.Name {
			continue
		}
		svc := &api.Service{Name: serviceName(jobID, pt), PortLabel: pt.label, Provider: o.serviceProvider(),
			Tags: []string{"landlord"}, TaskName: c.Name}
		if o.serviceProvider() == ServiceNomad {
			// Nomad's own services belong to the group.
			svc.TaskName = ""
		}
		if check := checkOf(c, pt, o.serviceProvider()); check != nil {
			svc.Checks = []api.ServiceCheck{*check}
		}
		out = append(out, svc)
	}
	if hc := c.HealthCheck; hc != nil && len(hc.Command) > 0 && len(out) > 0 {
		// A command check runs in the task; Consul carries it on the
		// container's first service.
		out[0].Checks = append(out[0].Checks, api.ServiceCheck{Name: c.Name + "-command", Type: "script", Command: hc.Command[0],
			Args: hc.Command[1:], TaskName: c.Name, Interval: cmp.Or(hc.Interval, 10*time.Second), Timeout: cmp.Or(hc.Timeout, 5*time.Second)})
	}
	return out
}

// checkOf is the http or tcp check of a container's health check that
// probes pt, if any.
func checkOf(c workload.ContainerSpec, pt port, provider string) *api.ServiceCheck {
	hc := c.HealthCheck
	if hc == nil || pt.protocol != workload.ProtocolTCP {
		return nil
	}
	check := &api.ServiceCheck{PortLabel: pt.label, Interval: cmp.Or(hc.Interval, 10*time.Second), Timeout: cmp.Or(hc.Timeout, 5*time.Second)}
	if hc.Retries > 1 && provider == ServiceConsul {
		// Nomad's own checks have no such setting; a deployment counts
		// an allocation unhealthy at its first failed check.
		check.FailuresBeforeCritical = hc.Retries - 1
	}
	switch {
	case hc.HTTP != nil && hc.HTTP.Port == pt.containerPort:
		check.Name, check.Type, check.Path = c.Name+"-http", "http", cmp.Or(hc.HTTP.Path, "/")
	case hc.TCP != nil && hc.TCP.Port == pt.containerPort:
		check.Name, check.Type = c.Name+"-tcp", "tcp"
	default:
		return nil
	}
	return check
}

// updateOf is the group's update block: Nomad's defaults where the config
// says nothing; canaries are promoted automatically.
func updateOf(u *updateStrategy) *api.UpdateStrategy {
	if u == nil {
		return nil
	}
	out := &api.UpdateStrategy{MaxParallel: u.MaxParallel, AutoRevert: u.AutoRevert, Canary: u.Canary}
	for dst, src := range map[**time.Duration]workload.Duration{&out.MinHealthyTime: u.MinHealthyTime, &out.HealthyDeadline: u.HealthyDeadline, &out.ProgressDeadline: u.ProgressDeadline} {
		if src != 0 {
			*dst = new(time.Duration(src))
		}
	}
	if u.Canary != nil && *u.Canary > 0 {
		out.AutoPromote = new(true)
	}
	return out
}

// restartOf is the group's restart block.
func restartOf(r *restartPolicy) *api.RestartPolicy {
	if r == nil {
		return nil
	}
	out := &api.RestartPolicy{Attempts: r.Attempts}
	if r.Mode != "" {
		out.Mode = new(r.Mode)
	}
	for dst, src := range map[**time.Duration]workload.Duration{&out.Interval: r.Interval, &out.Delay: r.Delay} {
		if src != 0 {
			*dst = new(time.Duration(src))
		}
	}
	return out
}
