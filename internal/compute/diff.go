package compute

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Diff lists what differs between two specs of the same tenant, container by
// container, for UpdateResult.Changes. Secret values never appear: a changed
// secret is reported by name only.
func Diff(from, to *TenantComputeSpec) []Change {
	var changes []Change
	old := map[string]ContainerSpec{}
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
	return append(changes, diffProviderFields(from.ProviderConfig, to.ProviderConfig)...)
}

// workloadFields are the config fields the spec's containers, secrets and
// networking already describe.
var workloadFields = map[string]bool{"name": true, "image": true, "command": true, "args": true, "env": true, "secrets": true,
	"ports": true, "health_check": true, "resources": true, "sidecars": true, "networking": true}

// diffProviderFields names the other top-level config fields that changed.
// Their values are not shown: the provider's schema may mark them secret.
func diffProviderFields(from, to json.RawMessage) []Change {
	var a, b map[string]json.RawMessage
	_ = json.Unmarshal(from, &a)
	_ = json.Unmarshal(to, &b)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var changes []Change
	for _, k := range sortedKeys(keys) {
		if workloadFields[k] {
			continue
		}
		if !sameJSON(a[k], b[k]) {
			changes = append(changes, Change{Field: "provider_config/" + k})
		}
	}
	return changes
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

func diffContainer(a, b ContainerSpec) []Change {
	var changes []Change
	field := func(name, from, to string) {
		if from != to {
			changes = append(changes, Change{Field: "containers/" + b.Name + "/" + name, From: from, To: to})
		}
	}
	field("image", a.Image, b.Image)
	field("command", quoteList(a.Command), quoteList(b.Command))
	field("args", quoteList(a.Args), quoteList(b.Args))
	for _, k := range sortedKeys(mergeKeys(a.Env, b.Env)) {
		field("env/"+k, a.Env[k], b.Env[k])
	}
	field("ports", portList(a.Ports), portList(b.Ports))
	field("health_check", healthString(a.HealthCheck), healthString(b.HealthCheck))
	field("resources/cpu_millicores", number(a.Resources.CPUMillicores), number(b.Resources.CPUMillicores))
	field("resources/memory_mib", number(a.Resources.MemoryMiB), number(b.Resources.MemoryMiB))
	return changes
}

func diffSecrets(a, b []SecretReference) []Change {
	key := func(s SecretReference) string { return "containers/" + s.Container + "/secrets/" + s.Name }
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
			changes = append(changes, Change{Field: k, To: RedactedValue})
		case prev != s.Value.Reveal():
			changes = append(changes, Change{Field: k, From: RedactedValue, To: RedactedValue})
		}
	}
	for _, k := range sortedKeys(old) {
		changes = append(changes, Change{Field: k, From: RedactedValue})
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

func portList(ports []PortMapping) string {
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

func healthString(h *HealthCheckConfig) string {
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
