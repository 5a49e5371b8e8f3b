package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Diff lists what differs between two specs of the same tenant, container by
// container, for UpdateResult.Changes. Secret values never appear: a changed
// secret is reported by name only.
func Diff(from, to *TenantComputeSpec) []Change {
	var changes []Change
	old := map[string]workload.ContainerSpec{}
	for _, c := range from.Containers {
		old[c.Name] = c
	}
	seen := map[string]bool{}
	for _, c := range to.Containers {
		seen[c.Name] = true
		prev, ok := old[c.Name]
		if !ok {
			changes = append(changes, Change{Field: "containers/" + c.Name, To: c.Image})
			continue
		}
		changes = append(changes, diffContainer(prev, c)...)
	}
	for _, c := range from.Containers {
		if !seen[c.Name] {
			changes = append(changes, Change{Field: "containers/" + c.Name, From: c.Image})
		}
	}
	changes = append(changes, diffSecrets(from.Secrets, to.Secrets)...)
	if from.Networking != to.Networking {
		changes = append(changes, Change{Field: "networking/public", From: fmt.Sprint(from.Networking.Public), To: fmt.Sprint(to.Networking.Public)})
	}
	return append(changes, diffProviderFields(from, to)...)
}

// diffProviderFields names the provider's own config fields that changed.
// Their values are not shown: the provider's schema may mark them secret.
// It compares the decoded Options; for a provider without a ConfigDecoder
// it compares the top-level fields of the configs outside the workload.
func diffProviderFields(from, to *TenantComputeSpec) []Change {
	var names []string
	if from.Options != nil || to.Options != nil {
		names = workload.ChangedFields(from.Options, to.Options)
	} else {
		names = changedConfigFields(from.ProviderConfig, to.ProviderConfig)
	}
	changes := make([]Change, len(names))
	for i, name := range names {
		changes[i] = Change{Field: "provider_config/" + name}
	}
	return changes
}

// workloadFields are the config fields the spec's workload describes.
var workloadFields = map[string]bool{"name": true, "image": true, "command": true, "args": true, "env": true, "secrets": true,
	"ports": true, "health_check": true, "resources": true, "sidecars": true, "networking": true}

// changedConfigFields names the top-level fields outside the workload whose
// values differ between two configs, by meaning.
func changedConfigFields(from, to json.RawMessage) []string {
	var a, b map[string]json.RawMessage
	_ = json.Unmarshal(from, &a)
	_ = json.Unmarshal(to, &b)
	keys := maps.Clone(a)
	if keys == nil {
		keys = map[string]json.RawMessage{}
	}
	maps.Copy(keys, b)
	var changed []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !workloadFields[k] && !sameJSON(a[k], b[k]) {
			changed = append(changed, k)
		}
	}
	return changed
}

// sameJSON compares two JSON values by meaning.
func sameJSON(a, b json.RawMessage) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

func diffContainer(a, b workload.ContainerSpec) []Change {
	var changes []Change
	field := func(name, from, to string) {
		if from != to {
			changes = append(changes, Change{Field: "containers/" + b.Name + "/" + name, From: from, To: to})
		}
	}
	field("image", a.Image, b.Image)
	field("command", quoteList(a.Command), quoteList(b.Command))
	field("args", quoteList(a.Args), quoteList(b.Args))
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(a.Env, b.Env))) {
		field("env/"+k, a.Env[k], b.Env[k])
	}
	field("ports", portList(a.Ports), portList(b.Ports))
	field("health_check", healthString(a.HealthCheck), healthString(b.HealthCheck))
	field("resources/cpu_millicores", number(a.Resources.CPUMillicores), number(b.Resources.CPUMillicores))
	field("resources/memory_mib", number(a.Resources.MemoryMiB), number(b.Resources.MemoryMiB))
	return changes
}

func diffSecrets(a, b []workload.SecretReference) []Change {
	key := func(s workload.SecretReference) string { return "containers/" + s.Container + "/secrets/" + s.Name }
	old := map[string]string{}
	for _, s := range a {
		old[key(s)] = s.Value.Reveal()
	}
	var changes []Change
	for _, s := range b {
		k := key(s)
		prev, ok := old[k]
		delete(old, k)
		switch {
		case !ok:
			changes = append(changes, Change{Field: k, To: workload.RedactedValue})
		case prev != s.Value.Reveal():
			changes = append(changes, Change{Field: k, From: workload.RedactedValue, To: workload.RedactedValue})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		changes = append(changes, Change{Field: k, From: workload.RedactedValue})
	}
	return changes
}

func mergeKeys(a, b map[string]string) map[string]bool {
	keys := make(map[string]bool, len(a)+len(b))
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

func quoteList(s []string) string {
	if len(s) == 0 {
		return ""
	}
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(q, " ") + "]"
}

func portList(ports []workload.PortMapping) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol)
		if p.HostPort != 0 {
			s[i] = fmt.Sprintf("%d:%s", p.HostPort, s[i])
		}
		if p.Name != "" {
			s[i] = p.Name + "=" + s[i]
		}
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}

func healthString(h *workload.HealthCheckConfig) string {
	if h == nil {
		return ""
	}
	probe := "command " + quoteList(h.Command)
	switch {
	case h.HTTP != nil:
		probe = fmt.Sprintf("http %s:%d", h.HTTP.Path, h.HTTP.Port)
	case h.TCP != nil:
		probe = fmt.Sprintf("tcp %d", h.TCP.Port)
	}
	return fmt.Sprintf("%s every %s, timeout %s, %d retries, start period %s", probe, h.Interval, h.Timeout, h.Retries, h.StartPeriod)
}

func number(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}
