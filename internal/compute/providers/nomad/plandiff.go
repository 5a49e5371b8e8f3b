package nomad

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Types of a plan diff's entries, as Nomad's structs.DiffType names them.
const (
	diffNone    = "None"
	diffAdded   = "Added"
	diffDeleted = "Deleted"
)

// planDrift turns the diff of a plan into drift at landlord's paths. The
// plan is of want, the job landlord would register, over got, the live
// job: a field's Old is what runs, its New what the spec asks for. Both
// sides have been through Nomad's canonicalisation, so a default Nomad
// fills in never differs.
type planDrift struct {
	p           *Provider
	want, got   *api.Job
	wantTG      *api.TaskGroup
	gotTG       *api.TaskGroup
	ports       []port
	secretNames map[string]bool // task + "/" + env name, for the secrets

	seen  map[string]bool
	drift provider.DriftCollector
}

// driftOfPlan is the drift a plan's diff shows.
// With a count range, d carries the live count (keepCount): a count that
// differs is one outside the range.
func (p *Provider) driftOfPlan(diff *api.JobDiff, d *desired, got *api.Job) []provider.Drift {
	if diff == nil || diff.Type == diffNone {
		return nil
	}
	x := &planDrift{p: p, want: d.job, got: got, ports: d.ports, secretNames: map[string]bool{}, seen: map[string]bool{}}
	x.wantTG, x.gotTG = groupOf(d.job, group), groupOf(got, group)
	for path, items := range d.secrets {
		task := strings.TrimPrefix(path, secretsPrefix(d.id)+group+"/")
		for name := range items {
			x.secretNames[task+"/"+name] = true
		}
	}
	x.job(diff)
	return x.drift.Drift()
}

// add records d once per path: a list's elements, say, differ one by one
// but read as one difference.
func (x *planDrift) add(d provider.Drift) {
	if (d.Expected == d.Found && d.Expected != "") || x.seen[d.Path] {
		return
	}
	x.seen[d.Path] = true
	x.drift.Add(d)
}

func (x *planDrift) job(diff *api.JobDiff) {
	for _, f := range changed(diff.Fields) {
		switch {
		case f.Name == "Stop":
			// A stopped job is the status's to report (job/status).
		case strings.HasPrefix(f.Name, "Meta["):
			key := strings.TrimSuffix(strings.TrimPrefix(f.Name, "Meta["), "]")
			if key == metaGeneration || key == metaConfigHash {
				// Bookkeeping: what they stand for is compared itself.
				continue
			}
			x.add(provider.Drift{Path: "job/meta/" + key, Kind: provider.DriftSettings, Expected: f.New, Found: f.Old})
		case f.Name == "NodePool":
			x.add(provider.Drift{Path: "job/node_pool", Kind: provider.DriftPlacement, Expected: f.New, Found: f.Old})
		default:
			x.field("job", provider.DriftSettings, f)
		}
	}
	for _, o := range changedObjects(diff.Objects) {
		switch o.Name {
		case "Datacenters":
			x.add(provider.Drift{Path: "job/datacenters", Kind: provider.DriftPlacement,
				Expected: strings.Join(x.want.Datacenters, ","), Found: strings.Join(x.got.Datacenters, ",")})
		case "Constraint":
			x.add(provider.Drift{Path: "job/constraints", Kind: provider.DriftPlacement,
				Expected: constraintsOf(x.want.Constraints), Found: constraintsOf(x.got.Constraints)})
		default:
			x.object("job/"+snake(o.Name), provider.DriftSettings, o)
		}
	}
	for _, g := range diff.TaskGroups {
		switch g.Type {
		case diffNone:
		case diffAdded:
			x.add(provider.Drift{Path: "group/" + g.Name, Kind: provider.DriftMissing, Expected: "present"})
		case diffDeleted:
			x.add(provider.Drift{Path: "group/" + g.Name, Kind: provider.DriftSettings, Found: "present"})
		default:
			x.group(g)
		}
	}
}

// group: the tenant's job has one group, so its fields read as the job's.
func (x *planDrift) group(g *api.TaskGroupDiff) {
	for _, f := range changed(g.Fields) {
		switch f.Name {
		case "Count":
			x.add(provider.Drift{Path: "job/count", Kind: provider.DriftScale, Expected: f.New, Found: f.Old})
		default:
			x.field("job", provider.DriftSettings, f)
		}
	}
	var networks []*api.ObjectDiff
	for _, o := range changedObjects(g.Objects) {
		switch o.Name {
		case "Network":
			// Nomad diffs networks as a set: an edited one is one
			// deleted and one added.
			networks = append(networks, o)
		case "Service":
			x.service(o)
		case "Update":
			x.object("job/update", provider.DriftSettings, o)
		case "RestartPolicy":
			x.object("job/restart", provider.DriftSettings, o)
		case "Scaling":
			x.object("job/scaling", provider.DriftScale, o)
		default:
			x.object("job/"+snake(o.Name), provider.DriftSettings, o)
		}
	}
	if len(networks) > 0 {
		x.network(networks)
	}
	for _, t := range g.Tasks {
		switch t.Type {
		case diffNone:
		case diffAdded:
			x.add(provider.Drift{Path: "containers/" + t.Name, Kind: provider.DriftMissing, Expected: "present"})
		case diffDeleted:
			x.add(provider.Drift{Path: "containers/" + t.Name, Kind: provider.DriftSettings, Found: "present"})
		default:
			x.task(t)
		}
	}
}

func (x *planDrift) task(t *api.TaskDiff) {
	prefix := "containers/" + t.Name
	want, got := taskOf(x.wantTG, t.Name), taskOf(x.gotTG, t.Name)
	for _, f := range changed(t.Fields) {
		switch {
		case strings.HasPrefix(f.Name, "Env["):
			key := strings.TrimSuffix(strings.TrimPrefix(f.Name, "Env["), "]")
			expected, found := f.New, f.Old
			if x.secretNames[t.Name+"/"+key] {
				// A secret's name set in the job by hand: its value is
				// not shown, whatever it is.
				expected, found = redacted(f.Type != diffDeleted), redacted(f.Type != diffAdded)
			}
			x.add(provider.Drift{Path: prefix + "/env/" + key, Kind: provider.DriftEnv, Expected: expected, Found: found})
		default:
			x.field(prefix, provider.DriftSettings, f)
		}
	}
	for _, o := range changedObjects(t.Objects) {
		switch o.Name {
		case "Config":
			x.config(prefix, want, got, o)
		case "Resources":
			for _, f := range changed(o.Fields) {
				switch f.Name {
				case "CPU":
					x.add(provider.Drift{Path: prefix + "/resources/cpu_millicores", Kind: provider.DriftResources,
						Expected: x.millicores(f.New), Found: x.millicores(f.Old)})
				case "MemoryMB":
					x.add(provider.Drift{Path: prefix + "/resources/memory_mib", Kind: provider.DriftResources, Expected: f.New, Found: f.Old})
				default:
					x.field(prefix+"/resources", provider.DriftResources, f)
				}
			}
			for _, sub := range changedObjects(o.Objects) {
				x.object(prefix+"/resources/"+snake(sub.Name), provider.DriftResources, sub)
			}
		case "Template":
			// The template renders the task's secrets from its Variable:
			// where they are mounted.
			x.object(prefix+"/template", provider.DriftEnv, o)
		default:
			x.object(prefix+"/"+snake(o.Name), provider.DriftSettings, o)
		}
	}
}

// config is the driver's configuration of a task, whose lists Nomad
// diffs element by element ("args[0]"): each reads as the whole list.
func (x *planDrift) config(prefix string, want, got *api.Task, o *api.ObjectDiff) {
	for _, f := range changed(o.Fields) {
		key, _, _ := strings.Cut(f.Name, "[")
		switch key {
		case "image":
			x.add(provider.Drift{Path: prefix + "/image", Kind: provider.DriftImage, Expected: f.New, Found: f.Old})
		case "entrypoint", "command":
			x.add(provider.Drift{Path: prefix + "/command", Kind: provider.DriftCommand, Expected: configList(want, key), Found: configList(got, key)})
		case "args":
			x.add(provider.Drift{Path: prefix + "/args", Kind: provider.DriftCommand, Expected: configList(want, key), Found: configList(got, key)})
		case "ports":
			x.add(provider.Drift{Path: prefix + "/ports", Kind: provider.DriftPorts, Expected: configList(want, key), Found: configList(got, key)})
		case "labels":
			x.add(provider.Drift{Path: prefix + "/labels", Kind: provider.DriftSettings, Expected: configLabels(want), Found: configLabels(got)})
		default:
			x.field(prefix+"/config", provider.DriftSettings, f)
		}
	}
	for _, sub := range changedObjects(o.Objects) {
		x.object(prefix+"/config/"+snake(sub.Name), provider.DriftSettings, sub)
	}
}

// network: the group's ports, each told under the container that
// publishes it; a port no container of the spec publishes under the job.
func (x *planDrift) network(diffs []*api.ObjectDiff) {
	want, got := portsByLabel(x.wantTG), portsByLabel(x.gotTG)
	var containers []string
	labels := map[string][]string{}
	known := map[string]bool{}
	for _, pt := range x.ports {
		if labels[pt.container] == nil {
			containers = append(containers, pt.container)
		}
		labels[pt.container] = append(labels[pt.container], pt.label)
		known[pt.label] = true
	}
	before := len(x.seen)
	for _, c := range containers {
		x.add(provider.Drift{Path: "containers/" + c + "/ports", Kind: provider.DriftPorts,
			Expected: portsSummary(want, labels[c]), Found: portsSummary(got, labels[c])})
	}
	var extra []string
	for label := range got {
		if !known[label] {
			extra = append(extra, label)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		x.add(provider.Drift{Path: "job/network/ports", Kind: provider.DriftPorts, Found: portsSummary(got, extra)})
	}
	if len(x.seen) == before {
		// Not the ports: the network's mode, say.
		for _, o := range diffs {
			x.object("job/network", provider.DriftNetwork, o)
		}
	}
}

// service is one of the group's services, named for a published port;
// its checks are the health check of the container that publishes it.
func (x *planDrift) service(o *api.ObjectDiff) {
	name := objectField(o, "Name")
	path := "service/" + name
	switch o.Type {
	case diffAdded:
		x.add(provider.Drift{Path: path, Kind: provider.DriftMissing, Expected: "present"})
		return
	case diffDeleted:
		x.add(provider.Drift{Path: path, Kind: provider.DriftSettings, Found: "present"})
		return
	}
	for _, f := range changed(o.Fields) {
		x.field(path, provider.DriftSettings, f)
	}
	want, got := serviceOf(x.wantTG, name), serviceOf(x.gotTG, name)
	for _, sub := range changedObjects(o.Objects) {
		if sub.Name != "Check" {
			x.object(path+"/"+snake(sub.Name), provider.DriftSettings, sub)
			continue
		}
		at := path + "/checks"
		if c := x.containerOfService(want, got); c != "" {
			at = "containers/" + c + "/health_check"
		}
		x.add(provider.Drift{Path: at, Kind: provider.DriftHealth, Expected: checksOf(want), Found: checksOf(got)})
	}
}

// containerOfService is the container that publishes the service's port.
func (x *planDrift) containerOfService(services ...*api.Service) string {
	for _, s := range services {
		if s == nil {
			continue
		}
		for _, pt := range x.ports {
			if pt.label == s.PortLabel {
				return pt.container
			}
		}
	}
	return ""
}

// object is any other object: missing, unexpected, or each changed field.
func (x *planDrift) object(path string, kind provider.DriftKind, o *api.ObjectDiff) {
	switch o.Type {
	case diffAdded:
		x.add(provider.Drift{Path: path, Kind: provider.DriftMissing, Expected: "present"})
	case diffDeleted:
		x.add(provider.Drift{Path: path, Kind: kind, Found: "present"})
	default:
		for _, f := range changed(o.Fields) {
			x.field(path, kind, f)
		}
		for _, sub := range changedObjects(o.Objects) {
			x.object(path+"/"+snake(sub.Name), kind, sub)
		}
	}
}

func (x *planDrift) field(prefix string, kind provider.DriftKind, f *api.FieldDiff) {
	x.add(provider.Drift{Path: prefix + "/" + snake(f.Name), Kind: kind, Expected: readable(f.Name, f.New), Found: readable(f.Name, f.Old)})
}

// millicores converts Nomad's MHz back into the config's millicores.
func (x *planDrift) millicores(mhz string) string {
	n, err := strconv.Atoi(mhz)
	if err != nil {
		return mhz
	}
	return strconv.Itoa(n * 1000 / x.p.settings.MHzPerCore)
}

func changed(fs []*api.FieldDiff) []*api.FieldDiff {
	return slices.DeleteFunc(slices.Clone(fs), func(f *api.FieldDiff) bool { return f.Type == diffNone })
}

func changedObjects(os []*api.ObjectDiff) []*api.ObjectDiff {
	return slices.DeleteFunc(slices.Clone(os), func(o *api.ObjectDiff) bool { return o.Type == diffNone })
}

// objectField is the value of an object's field, either side.
func objectField(o *api.ObjectDiff, name string) string {
	for _, f := range o.Fields {
		if f.Name == name {
			return cmpOr(f.New, f.Old)
		}
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func redacted(present bool) string {
	if present {
		return workload.RedactedValue
	}
	return ""
}

func groupOf(job *api.Job, name string) *api.TaskGroup {
	if job == nil {
		return nil
	}
	for _, tg := range job.TaskGroups {
		if tg.Name != nil && *tg.Name == name {
			return tg
		}
	}
	return nil
}

func taskOf(tg *api.TaskGroup, name string) *api.Task {
	if tg == nil {
		return nil
	}
	for _, t := range tg.Tasks {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func serviceOf(tg *api.TaskGroup, name string) *api.Service {
	if tg == nil {
		return nil
	}
	for _, s := range tg.Services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// configList is a list of a task's driver configuration, words joined by
// spaces; the live job's lists decode as []any.
func configList(t *api.Task, key string) string {
	if t == nil {
		return ""
	}
	switch v := t.Config[key].(type) {
	case []string:
		return strings.Join(v, " ")
	case []any:
		words := make([]string, len(v))
		for i, w := range v {
			words[i] = fmt.Sprint(w)
		}
		return strings.Join(words, " ")
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// configLabels is the labels block of a task's docker configuration.
func configLabels(t *api.Task) string {
	if t == nil {
		return ""
	}
	var pairs []string
	add := func(m map[string]any) {
		for k, v := range m {
			pairs = append(pairs, k+"="+fmt.Sprint(v))
		}
	}
	switch v := t.Config["labels"].(type) {
	case []map[string]string:
		for _, m := range v {
			for k, val := range m {
				pairs = append(pairs, k+"="+val)
			}
		}
	case []any:
		for _, m := range v {
			if m, ok := m.(map[string]any); ok {
				add(m)
			}
		}
	case map[string]any:
		add(v)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

// portsByLabel are a group's ports by label.
func portsByLabel(tg *api.TaskGroup) map[string]api.Port {
	out := map[string]api.Port{}
	if tg == nil {
		return out
	}
	for _, n := range tg.Networks {
		for _, p := range n.DynamicPorts {
			out[p.Label] = p
		}
		for _, p := range n.ReservedPorts {
			out[p.Label] = p
		}
	}
	return out
}

// portsSummary words the ports of labels: "app_http to 8080", "app_udp_9000
// 19000 to 9000" (a static host port).
func portsSummary(ports map[string]api.Port, labels []string) string {
	var out []string
	for _, l := range labels {
		p, ok := ports[l]
		if !ok {
			continue
		}
		s := l
		if p.Value != 0 {
			s += " " + strconv.Itoa(p.Value)
		}
		if p.To != 0 {
			s += " to " + strconv.Itoa(p.To)
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// checksOf words a service's checks: "http /healthz every 1s, timeout 1s".
func checksOf(s *api.Service) string {
	if s == nil {
		return ""
	}
	var out []string
	for _, c := range s.Checks {
		w := c.Type
		if c.Path != "" {
			w += " " + c.Path
		}
		if c.Command != "" {
			w += " " + strings.Join(append([]string{c.Command}, c.Args...), " ")
		}
		w += fmt.Sprintf(" every %s, timeout %s", c.Interval, c.Timeout)
		out = append(out, w)
	}
	return strings.Join(out, "; ")
}

// constraintsOf words a job's constraints.
func constraintsOf(cs []*api.Constraint) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = strings.TrimSpace(c.LTarget + " " + c.Operand + " " + c.RTarget)
	}
	return strings.Join(out, "; ")
}

// maxValue bounds the values drift shows: a template's text, say.
const maxValue = 80

// readable is a diff's value as a person reads it: durations, which Nomad
// shows in nanoseconds, as durations, and long values shortened.
func readable(name, v string) string {
	if isDuration(name) {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return time.Duration(n).String()
		}
	}
	if len(v) > maxValue {
		return v[:maxValue-3] + "..."
	}
	return v
}

func isDuration(name string) bool {
	for _, suffix := range []string{"Time", "Deadline", "Interval", "Timeout", "Delay", "Splay", "Stagger", "Grace"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// snake is a Nomad field or object name as a path element:
// "MinHealthyTime" → "min_healthy_time", "Dynamic Port" → "dynamic_port",
// "MemoryMB" → "memory_mb".
func snake(name string) string {
	r := []rune(strings.ReplaceAll(name, " ", "_"))
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && r[i-1] != '_' {
			prevLower := unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || (unicode.IsUpper(r[i-1]) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
