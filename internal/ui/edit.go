package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// formView is the create and edit form. Its fields are made from the
// provider's schema (GET /v1/compute/config) each time it is shown; what it
// sends is judged by the API alone, whose problems are shown at the fields
// their pointers name.
type formView struct {
	// Tenant is the tenant edited; nil for a create.
	Tenant    *client.Tenant
	Provider  string
	Providers []string
	// Fields holds the name (create), compute_config, labels and
	// annotations.
	Fields *field
	// Raw is the editor's text when the body is edited as JSON or YAML.
	Raw     bool
	RawText string
	// Notice says why the raw editor is shown.
	Notice string
	// Detail and Problems are the API's answer when it refused the body;
	// Problems are those no field holds (all of them in the raw editor).
	Detail   string
	Problems []fieldProblem
	// Placed counts the problems shown at their fields.
	Placed int
	// Preview is the effective config of a dry run.
	Preview string
	// Carried are the config's provider choice (compute_provider), which
	// the schema does not describe, kept as they are.
	Carried string
	CSRF    string
	Stale   bool
	// Secrets carries, sealed, the secrets typed before the form came
	// back, which the page never holds in the clear.
	Secrets string
}

// Action says what a form's button asks for.
func (f *formView) Action() string {
	if f.Tenant != nil {
		return tenantPath(f.Tenant.Name) + "/edit"
	}
	return Prefix + "tenants/new"
}

// form is a form being worked on: the schema of its provider and the body
// so far.
type form struct {
	cc     *client.ComputeConfig
	schema *node
	// plan is the plan field of a create (planNode); nil on an edit, or
	// when there are no plans.
	plan *node
	body object
}

func (c *Console) newTenant(x *call) error {
	provider := x.r.URL.Query().Get("provider")
	f, err := c.loadForm(x, provider)
	if err != nil {
		return err
	}
	if f.plan, err = planNode(x.r.Context(), x.api); err != nil {
		return err
	}
	v := c.formView(x, f, nil)
	if x.r.URL.Query().Get("mode") == "raw" {
		v.Raw, v.RawText = true, rawText(f.body)
	}
	return c.show(x, "form", "New tenant", "tenants", v)
}

func (c *Console) editTenant(x *call) error {
	t, err := x.api.Tenants().Get(x.r.Context(), x.r.PathValue("tenant"), client.GetOptions{})
	if err != nil {
		return err
	}
	f, err := c.loadForm(x, t.ComputeProvider)
	if err != nil {
		return err
	}
	if len(t.Placements) > 1 {
		// The form shows one compute_config: a tenant of several
		// placements is edited as the text of them all.
		var ps []any
		for _, p := range t.Placements {
			if p.Removed {
				continue
			}
			cfg, err := decodeOrdered(p.ComputeConfig)
			if err != nil {
				return fmt.Errorf("ui: the config of placement %s of tenant %s: %w", p.Name, t.ID, err)
			}
			ps = append(ps, object{{Key: "name", Value: p.Name}, {Key: "compute_config", Value: cfg}})
		}
		f.body = object{{Key: "placements", Value: ps}}
	} else {
		cfg, err := decodeOrdered(t.ComputeConfig)
		if err != nil {
			return fmt.Errorf("ui: the config of tenant %s: %w", t.ID, err)
		}
		f.body = object{{Key: "compute_config", Value: cfg}}
	}
	if t.Labels != nil {
		f.body = append(f.body, member{Key: "labels", Value: mapObject(t.Labels)})
	}
	if t.Annotations != nil {
		f.body = append(f.body, member{Key: "annotations", Value: mapObject(t.Annotations)})
	}
	v := c.formView(x, f, t)
	if len(t.Placements) > 1 {
		v.Raw, v.RawText = true, rawText(f.body)
		v.Notice = "This tenant has placements, each with its compute_config, so it is edited as JSON or YAML: a placement left out is removed, and its workload destroyed."
	} else if bad := f.unrepresentable(); len(bad) > 0 || x.r.URL.Query().Get("mode") == "raw" {
		v.Raw, v.RawText = true, rawText(f.body)
		if len(bad) > 0 {
			v.Notice = "This tenant's config has what the form cannot show (" + strings.Join(bad, ", ") + "), so it is edited as JSON or YAML."
		}
	}
	return c.show(x, "form", "Edit "+t.Name, "tenants", v)
}

// loadForm reads the provider's schema and defaults through the API.
func (c *Console) loadForm(x *call, provider string) (*form, error) {
	cc, err := x.api.Compute().Config(x.r.Context(), provider)
	if err != nil {
		return nil, err
	}
	schema, err := c.schema(cc.Schema)
	if err != nil {
		return nil, err
	}
	return &form{cc: cc, schema: schema, body: object{}}, nil
}

// schema is the form's reading of a provider's schema, kept by the
// schema's text: a provider that changes its schema gets a new one.
func (c *Console) schema(raw json.RawMessage) (*node, error) {
	c.mu.Lock()
	n, ok := c.schemas[string(raw)]
	c.mu.Unlock()
	if ok {
		return n, nil
	}
	n, err := parseSchema(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.schemas == nil || len(c.schemas) >= maxSchemas {
		c.schemas = map[string]*node{}
	}
	c.schemas[string(raw)] = n
	c.mu.Unlock()
	return n, nil
}

// maxSchemas bounds the schemas kept: one per enabled provider is the need.
const maxSchemas = 32

func (c *Console) formView(x *call, f *form, t *client.Tenant) *formView {
	v := &formView{Tenant: t, Provider: f.cc.Provider, CSRF: x.sess.CSRF}
	v.Providers = c.providerNames(x)
	cfg, carried := f.config()
	if len(carried) > 0 {
		b, _ := json.Marshal(carried)
		v.Carried = string(b)
	}
	defaults, _ := decodeOrdered(f.cc.Defaults)
	root := &field{Kind: "object"}
	if t == nil {
		name, _ := f.body.get("name")
		root.Children = append(root.Children, &field{Pointer: "/name", Label: "name", Kind: "text", Required: true, Value: scalarText(name),
			Help: "Lowercase letters, digits and hyphens; unique among tenants."})
		if f.plan != nil {
			plan, _ := f.body.get("plan")
			root.Children = append(root.Children, fields(f.plan, "plan", "/plan", false, plan, nil))
		}
	}
	cf := fields(f.schema, "compute_config", "/compute_config", true, cfg, defaults)
	cf.Help = "The workload, as the " + f.cc.Provider + " provider's schema describes it."
	root.Children = append(root.Children, cf)
	for _, k := range []string{"labels", "annotations"} {
		val, _ := f.body.get(k)
		m := fields(&node{Type: "object", Values: &node{Type: "string"}}, k, "/"+k, false, val, nil)
		root.Children = append(root.Children, m)
	}
	v.Fields = root
	typed := map[string]string{}
	typedSecrets(f.schema, "/compute_config", cfg, typed)
	if len(typed) > 0 {
		v.Secrets = c.sealer.sealBytes(secretsAD, mustJSON(typed))
	}
	return v
}

// secretsAD binds the sealed secrets of a form to their purpose.
var secretsAD = []byte("landlord console form secrets v1")

// secretInputs are what the form's empty secret inputs mean: the tenant's
// stored secrets (t, on an edit) and those typed before, carried sealed.
func (c *Console) secretInputs(t *client.Tenant, sealed string) *secretInputs {
	s := &secretInputs{kept: map[string]bool{}, carried: map[string]string{}}
	if t != nil {
		for _, p := range setSecrets(t.ComputeConfig) {
			s.kept[p] = true
		}
	}
	if plain, ok := c.sealer.openBytes(secretsAD, sealed); ok {
		_ = json.Unmarshal(plain, &s.carried)
	}
	return s
}

// config is the body's compute_config as the form shows it, and apart
// the provider choice (compute_provider), which the schema does not
// describe and the form carries as it is.
func (f *form) config() (cfg, choice object) {
	v, _ := f.body.get("compute_config")
	all, _ := v.(object)
	for _, m := range all {
		if m.Key == client.SelectionKey || m.Key == client.SelectionKeyType {
			choice = append(choice, m)
		} else {
			cfg = append(cfg, m)
		}
	}
	return cfg, choice
}

func (f *form) unrepresentable() []string {
	cfg, _ := f.config()
	return unrepresentable(f.schema, "/compute_config", cfg)
}

// read makes the body from a submitted form.
func (f *form) read(values url.Values, create bool, carried string, secrets *secretInputs) {
	f.body = object{}
	if create {
		f.body = append(f.body, member{Key: "name", Value: strings.TrimSpace(values.Get("/name"))})
		if f.plan != nil {
			if plan, ok := decode(f.plan, "/plan", values, nil); ok {
				f.body = append(f.body, member{Key: "plan", Value: plan})
			}
		}
	}
	cfg, ok := decode(f.schema, "/compute_config", values, secrets)
	if !ok {
		cfg = object{}
	}
	if c, err := decodeOrdered([]byte(carried)); err == nil {
		if o, ok := c.(object); ok {
			cfg = append(o, cfg.(object)...)
		}
	}
	f.body = append(f.body, member{Key: "compute_config", Value: cfg})
	labels := &node{Type: "object", Values: &node{Type: "string"}}
	for _, k := range []string{"labels", "annotations"} {
		m, ok := decode(labels, "/"+k, values, nil)
		if ok || !create {
			if !ok {
				m = object{} // the form shows them all: none left means none
			}
			f.body = append(f.body, member{Key: k, Value: m})
		}
	}
}

// maxRawBytes bounds the editor's text, as the API bounds a body.
const maxRawBytes = 1 << 20

// submitForm handles every button of the form: a change of provider, an
// item added or removed, a switch between the form and the editor, a
// preview (a dry run) and the save itself.
func (c *Console) submitForm(x *call) error {
	var t *client.Tenant
	var version int64
	if name := x.r.PathValue("tenant"); name != "" {
		var err error
		if t, err = x.api.Tenants().Get(x.r.Context(), name, client.GetOptions{}); err != nil {
			return err
		}
		// The version the form was opened at: a save checks it (If-Match).
		if version, err = strconv.ParseInt(x.r.PostFormValue("_version"), 10, 64); err != nil || version < 1 {
			c.renderError(x.w, x.r, x.sess, http.StatusBadRequest, "This form lacks the version of the tenant it edits: open it again.")
			return nil
		}
	}
	provider := x.r.PostFormValue("provider")
	if t != nil {
		provider = t.ComputeProvider
	}
	f, err := c.loadForm(x, provider)
	if err != nil {
		return err
	}
	if t == nil {
		if f.plan, err = planNode(x.r.Context(), x.api); err != nil {
			return err
		}
	}
	action := x.r.PostFormValue("_action")
	raw := x.r.PostFormValue("mode") == "raw"
	text := x.r.PostFormValue("_raw")
	var rawErr error
	switch {
	case !raw:
		f.read(x.r.PostForm, t == nil, x.r.PostFormValue("_carried"), c.secretInputs(t, x.r.PostFormValue("_secrets")))
	case len(text) > maxRawBytes:
		rawErr = fmt.Errorf("the editor holds %d bytes; a tenant is at most %d", len(text), maxRawBytes)
	default:
		var body any
		body, rawErr = parseRaw(text)
		if o, ok := body.(object); ok {
			f.body = o
		} else if rawErr == nil {
			rawErr = errors.New("the tenant must be a JSON object (or a YAML mapping) of its fields")
		}
	}
	v := c.formView(x, f, t)
	v.Raw, v.RawText = raw, text
	if t != nil {
		v.Tenant.Version = version
	}
	status := http.StatusOK
	switch {
	case rawErr != nil && (action == "save" || action == "preview" || action == "form"):
		v.Detail = rawErr.Error()
		status = http.StatusBadRequest
	case rawErr != nil: // another button: keep the text as it is
	case action == "form":
		v.Raw = false
		if bad := f.unrepresentable(); len(bad) > 0 {
			v.Raw = true
			v.Notice = "The form cannot show " + strings.Join(bad, ", ") + ": keep editing it here."
		}
	case action == "raw":
		v.Raw, v.RawText = true, text
		if !raw {
			v.RawText = rawText(f.body)
		}
	case action == "provider" || strings.HasPrefix(action, "add:") || strings.HasPrefix(action, "remove:") || strings.HasPrefix(action, "more:"):
		if !raw {
			f.body = edit(f.body, action)
			v = c.formView(x, f, t)
			if t != nil {
				v.Tenant.Version = version
			}
		}
	case action == "preview" && t == nil:
		created, err := x.api.Tenants().CreateRaw(x.r.Context(), mustJSON(f.body), client.CreateOptions{DryRun: true})
		if status, err = v.problems(err); err != nil {
			return err
		}
		if created != nil {
			v.Preview = pretty(created.EffectiveConfig)
		}
	case action == "save":
		var saved *client.Tenant
		if t == nil {
			saved, err = x.api.Tenants().CreateRaw(x.r.Context(), mustJSON(f.body), client.CreateOptions{})
		} else {
			saved, err = x.api.Tenants().ReplaceRaw(x.r.Context(), t.ID, mustJSON(f.body), client.UpdateOptions{IfMatch: version})
		}
		if status, err = v.problems(err); err != nil {
			return err
		}
		if saved != nil {
			http.Redirect(x.w, x.r, tenantPath(saved.Name), http.StatusSeeOther)
			return nil
		}
	default:
		c.renderError(x.w, x.r, x.sess, http.StatusBadRequest, "This form has no button "+strconv.Quote(action)+".")
		return nil
	}
	if v.Secrets != "" && status != http.StatusOK && !v.Raw {
		v.Notice = strings.TrimSpace(v.Notice + " The secrets you typed are kept, sealed, and not shown: leave their inputs empty to keep them.")
	}
	title := "New tenant"
	if t != nil {
		title = "Edit " + t.Name
	}
	return c.showStatus(x, status, "form", title, "tenants", v)
}

// problems puts a refusal of the API on the form: each field at fault at
// its field (in the editor, all in a list). Errors that are not a refusal
// of the body are returned.
func (v *formView) problems(err error) (int, error) {
	var apiErr *client.Error
	if err == nil {
		return http.StatusOK, nil
	}
	if !errors.As(err, &apiErr) || apiErr.Status < 400 || apiErr.Status >= 500 || apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusForbidden {
		return 0, err
	}
	v.Detail = apiErr.Problem.Detail
	if apiErr.Status == http.StatusPreconditionFailed {
		v.Stale = true
		v.Detail = "Someone changed this tenant since you opened the form; open it again to edit what it is now."
	}
	var ps []fieldProblem
	for _, e := range apiErr.Problem.Errors {
		ps = append(ps, fieldProblem{Pointer: e.Pointer, Message: e.Message})
	}
	if v.Raw {
		v.Problems = ps
	} else {
		v.Problems = place(v.Fields, ps)
		v.Placed = len(ps) - len(v.Problems)
	}
	return apiErr.Status, nil
}

// edit adds an empty item to the list at the action's pointer, or removes
// the item it names; other actions (more: a map's row, which every map
// shows one more of anyway) change nothing.
func edit(body object, action string) object {
	verb, ptr, _ := strings.Cut(action, ":")
	segs := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	var apply func(v any, segs []string) any
	apply = func(v any, segs []string) any {
		if len(segs) == 0 {
			if items, ok := v.([]any); verb == "add" && (ok || v == nil) {
				return append(items, object{})
			}
			return v
		}
		key := violation.Unescape(segs[0])
		switch cur := v.(type) {
		case object:
			out := slices.Clone(cur)
			for i := range out {
				if out[i].Key == key {
					out[i].Value = apply(out[i].Value, segs[1:])
					return out
				}
			}
			if verb == "add" { // the list, or an object holding it, is not there yet
				var missing any
				if len(segs) > 1 {
					if _, err := strconv.Atoi(segs[1]); err == nil {
						return out // an item of a list that is not there
					}
					missing = object{}
				}
				return append(out, member{Key: key, Value: apply(missing, segs[1:])})
			}
			return out
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(cur) {
				return cur
			}
			if verb == "remove" && len(segs) == 1 {
				return slices.Delete(slices.Clone(cur), i, i+1)
			}
			out := slices.Clone(cur)
			out[i] = apply(out[i], segs[1:])
			return out
		}
		return v
	}
	if verb != "add" && verb != "remove" {
		return body
	}
	out, _ := apply(body, segs).(object)
	return out
}

func mapObject(m map[string]string) object {
	o := object{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		o = append(o, member{Key: k, Value: m[k]})
	}
	return o
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // values made by decodeOrdered and decode always encode
	}
	return b
}
