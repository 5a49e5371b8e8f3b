package nomad

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// writeSecrets writes each task's secret values into its Variable.
func (p *Provider) writeSecrets(ctx context.Context, d *desired) error {
	for _, path := range slices.Sorted(maps.Keys(d.secrets)) {
		v := &api.Variable{Path: path, Items: d.secrets[path]}
		if _, _, err := p.client.Variables().Update(v, write(ctx)); err != nil {
			return apiError("write the secret values of job "+d.id+" (Variable "+path+")", err)
		}
	}
	return nil
}

// variableDigest is what is kept of a Variable's items: a keyed digest of
// each, as of the Variable's modify index.
type variableDigest struct {
	index uint64
	items map[string]string
}

// variablesDrift compares the job's Variables with d's secret values: a
// Variable missing (variable/<task>, as after nomad var purge), a value
// missing, changed or added (containers/<task>/secrets/<KEY>, the value
// never shown), a Variable no task should have. It lists the Variables
// (one call) and reads the items only of those that changed since it last
// looked; it compares keyed digests, so no value is kept.
func (p *Provider) variablesDrift(ctx context.Context, c *api.Client, d *desired) ([]provider.Drift, error) {
	list, _, err := c.Variables().PrefixList(secretsPrefix(d.id), query(ctx))
	if err != nil {
		return nil, apiError("list the Variables of job "+d.id, err)
	}
	live := map[string]*api.VariableMetadata{}
	for _, v := range list {
		live[v.Path] = v
	}
	var dc provider.DriftCollector
	always := func(string) bool { return true }
	for _, path := range slices.Sorted(maps.Keys(d.secrets)) {
		task := variableTask(d.id, path)
		meta, ok := live[path]
		if !ok {
			dc.Missing("variable/"+task, path)
			continue
		}
		got, err := p.variableItems(ctx, c, meta)
		if err != nil {
			return nil, err
		}
		if got == nil {
			// Deleted between the list and the read.
			dc.Missing("variable/"+task, path)
			continue
		}
		dc.CompareMap("containers/"+task+"/secrets", provider.DriftEnv, p.digests(d.secrets[path]), got, always)
	}
	for _, path := range slices.Sorted(maps.Keys(live)) {
		if _, ok := d.secrets[path]; !ok {
			dc.Add(provider.Drift{Path: "variable/" + variableTask(d.id, path), Kind: provider.DriftEnv, Found: path})
		}
	}
	return dc.Drift(), nil
}

// variableItems returns the digests of a Variable's items, read again only
// when it changed; nil when it no longer exists.
func (p *Provider) variableItems(ctx context.Context, c *api.Client, meta *api.VariableMetadata) (map[string]string, error) {
	key := meta.Namespace + "/" + meta.Path
	if v, ok := p.varDigests.Load(key); ok {
		if vd := v.(variableDigest); vd.index == meta.ModifyIndex {
			return vd.items, nil
		}
	}
	v, _, err := c.Variables().Peek(meta.Path, query(ctx))
	if err != nil {
		return nil, apiError("read Variable "+meta.Path, err)
	}
	if v == nil {
		p.varDigests.Delete(key)
		return nil, nil
	}
	items := p.digests(v.Items)
	p.varDigests.Store(key, variableDigest{index: v.ModifyIndex, items: items})
	return items, nil
}

// digests are keyed digests of items, each bound to its key: equal when
// the values are, and of no use to guess one.
func (p *Provider) digests(items map[string]string) map[string]string {
	out := make(map[string]string, len(items))
	for k, v := range items {
		out[k] = provider.Fingerprint(p.hashKey, []byte(k+"\x00"+v))
	}
	return out
}

// variableTask is the task a Variable of the job is for (its path's last
// element under the group), or its path under the job's prefix.
func variableTask(jobID, path string) string {
	rest := strings.TrimPrefix(path, secretsPrefix(jobID))
	return strings.TrimPrefix(rest, group+"/")
}

// forget drops what is remembered of a job's plans and Variables, in any
// namespace, once it is gone.
func (p *Provider) forget(jobID string) {
	for _, m := range []*sync.Map{&p.plans, &p.varDigests} {
		m.Range(func(k, _ any) bool {
			// Keys are namespace/job ID and namespace/path; a namespace
			// has no "/".
			_, rest, _ := strings.Cut(k.(string), "/")
			if rest == jobID || strings.HasPrefix(rest, secretsPrefix(jobID)) {
				m.Delete(k)
			}
			return true
		})
	}
}
