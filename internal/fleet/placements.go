package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// A plan version's config may hold, in its member PlacementsKey, a
// fragment per placement name: {"image": "app:2", "placements": {"eu":
// {"env": {"REGION": "eu"}}}}. The plan layer of a tenant's placement is
// then the config without that member, merged (RFC 7396) with the
// placement's fragment, if any (Layer). A tenant of one placement is its
// placement "default".

// PlacementsKey is the member of a plan version's config that holds its
// per-placement fragments.
const PlacementsKey = "placements"

// Fragments splits a plan version's config into its base (the config
// without PlacementsKey) and its fragments by placement name (nil when it
// has none). A PlacementsKey that is not an object of objects named as
// placements are is an error wrapping ErrInvalid, each problem at its
// pointer relative to the config.
func Fragments(config json.RawMessage) (json.RawMessage, map[string]json.RawMessage, error) {
	if !bytes.Contains(config, []byte(`"`+PlacementsKey+`"`)) {
		return config, nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(config, &top); err != nil {
		return nil, nil, fmt.Errorf("%w: the config is not a JSON object: %w", ErrInvalid, err)
	}
	raw, ok := top[PlacementsKey]
	if !ok {
		return config, nil, nil
	}
	delete(top, PlacementsKey)
	base, err := json.Marshal(top)
	if err != nil {
		return nil, nil, fmt.Errorf("fleet: encode a plan's config: %w", err)
	}
	var fragments map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fragments); err != nil || fragments == nil {
		return nil, nil, violation.New(ErrInvalid, "/"+PlacementsKey, "must be an object: a config fragment by placement name")
	}
	var errs violation.List
	names := make([]string, 0, len(fragments))
	for name := range fragments {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		at := "/" + PlacementsKey + "/" + violation.Escape(name)
		if err := tenant.ValidatePlacementName(name); err != nil {
			errs.Add(at, "%s", strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": "))
		}
		if f := bytes.TrimSpace(fragments[name]); len(f) == 0 || f[0] != '{' {
			errs.Add(at, "must be an object: the fields of the plan's config for this placement")
		}
	}
	if err := errs.Err(ErrInvalid); err != nil {
		return nil, nil, err
	}
	return base, fragments, nil
}

// Layer is the plan layer of the placement named name of a tenant that
// follows a version whose config is config: its base, merged with the
// fragment it holds for name, if any. A config without fragments is
// returned as it is.
func Layer(config json.RawMessage, name string) (json.RawMessage, error) {
	base, fragments, err := Fragments(config)
	if err != nil {
		return nil, err
	}
	fragment, ok := fragments[name]
	if !ok {
		return base, nil
	}
	b, err := workload.DecodeObject(base, "plan config")
	if err != nil {
		return nil, err
	}
	f, err := workload.DecodeObject(fragment, "the plan's fragment of placement "+name)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(workload.MergeObjects(b, f))
	if err != nil {
		return nil, fmt.Errorf("fleet: encode the plan layer of placement %s: %w", name, err)
	}
	return out, nil
}
