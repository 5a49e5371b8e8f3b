package nomad

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Meta keys landlord sets on each job it registers.
const (
	metaManagedBy  = "landlord_managed_by"
	metaTenantID   = "landlord_tenant_id"
	metaTenantName = "landlord_tenant_name"
	metaGeneration = "landlord_generation"
	// metaConfigHash fingerprints the spec the job was built from (secret
	// values included, keyed with the install's key), so that an unchanged
	// spec costs one read and no write.
	metaConfigHash = "landlord_config_hash"
	// metaPorts describes the published ports (label=container,name,
	// container port,protocol;…), for the endpoints of GetStatus.
	metaPorts = "landlord_ports"
	managedBy = "landlord"
)

// Labels of the Docker containers of a tenant's tasks, beside Nomad's own.
const (
	labelJob      = "dev.landlord.job"
	labelTenantID = "dev.landlord.tenant-id"
)

// group is the name of the one task group of a tenant's job.
const group = "tenant"

// maxJobID bounds job IDs so that the paths of their Variables
// (nomad/jobs/<job>/<group>/<task>, at most 128 characters) always fit,
// and the services named after them stay DNS labels.
const (
	maxJobID  = 63
	maxPrefix = 24
)

var validJobPrefix = regexp.MustCompile(`^[a-z0-9-]{0,24}$`)

// shorten returns name, or when it is longer than max, its first
// characters and a hash of the whole: deterministic, and distinct for
// distinct names.
func shorten(name string, max int) string {
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimRight(name[:max-9], "-") + "-" + hex.EncodeToString(sum[:4])
}

// jobID is the ID of the job of the tenant called tenantName.
func (p *Provider) jobID(tenantName string) string {
	return shorten(p.prefix+tenantName, maxJobID)
}

// secretsPath is the path of the Variable that holds a task's secret
// values. Nomad lets the task, and no other, read it without a policy.
func secretsPath(jobID, task string) string {
	return "nomad/jobs/" + jobID + "/" + group + "/" + task
}

// secretsPrefix is the prefix of the paths of all the job's Variables.
func secretsPrefix(jobID string) string { return "nomad/jobs/" + jobID + "/" }

// port is one published port of the tenant's task group.
type port struct {
	label         string
	container     string
	name          string
	containerPort int
	hostPort      int
	protocol      workload.Protocol
}

// portsOf are the workload's published ports in order, each labelled
// <container>_<name>, else <container>_<protocol>_<container port>, with
// the hyphens Nomad's labels may not carry made underscores.
func portsOf(w workload.Workload) []port {
	var out []port
	for _, c := range w.Containers {
		for _, pm := range c.Ports {
			pt := port{container: c.Name, name: pm.Name, containerPort: pm.ContainerPort, hostPort: pm.HostPort, protocol: pm.Protocol}
			if pt.protocol == "" {
				pt.protocol = workload.ProtocolTCP
			}
			suffix := pm.Name
			if suffix == "" {
				suffix = string(pt.protocol) + "_" + strconv.Itoa(pm.ContainerPort)
			}
			pt.label = strings.ReplaceAll(c.Name+"_"+suffix, "-", "_")
			out = append(out, pt)
		}
	}
	return out
}

// serviceName is the name of the service of a published port: a DNS label
// made of the job ID and the port's label.
func serviceName(jobID string, pt port) string {
	return shorten(jobID+"-"+strings.ReplaceAll(pt.label, "_", "-"), maxJobID)
}

// encodePorts is the metaPorts value of ports.
func encodePorts(ports []port) string {
	parts := make([]string, len(ports))
	for i, pt := range ports {
		parts[i] = fmt.Sprintf("%s=%s,%s,%d,%s", pt.label, pt.container, pt.name, pt.containerPort, pt.protocol)
	}
	return strings.Join(parts, ";")
}

// portsOfJob are the published ports a job's meta describes.
func portsOfJob(job *api.Job) []port {
	var out []port
	for _, part := range strings.Split(job.Meta[metaPorts], ";") {
		label, rest, ok := strings.Cut(part, "=")
		f := strings.Split(rest, ",")
		if !ok || len(f) != 4 {
			continue
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		out = append(out, port{label: label, container: f[0], name: f[1], containerPort: n, protocol: workload.Protocol(f[3])})
	}
	return out
}
