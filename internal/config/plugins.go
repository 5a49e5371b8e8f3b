package config

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Plugin is a provider plugin: a program landlord starts at serve that
// serves one compute provider over the plugin protocol
// (docs/plugins.md). The provider is then enabled as if compiled in.
type Plugin struct {
	// Name is the provider's name, as tenants choose it and as the plugin
	// describes itself.
	Name string `yaml:"name"`
	// Path is the plugin's binary, an absolute path.
	Path string `yaml:"path"`
	// SHA256 is the hex SHA-256 of the binary, checked at every start.
	SHA256 string `yaml:"sha256"`
	// Args are the binary's arguments.
	Args []string `yaml:"args"`
	// Env is added to the binary's minimal environment (PATH, HOME,
	// TMPDIR); landlord's own environment is not passed on.
	Env map[string]string `yaml:"env"`
	// Settings is the plugin's block: its own settings and its tenants'
	// defaults, as compute.<name> is for a provider compiled in.
	Settings map[string]any `yaml:"settings"`
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validatePlugins checks the plugins block: each has a provider name, an
// absolute path and the binary's SHA-256, and no name is taken twice.
func (c Config) validatePlugins() []error {
	var errs []error
	seen := map[string]bool{}
	for i, p := range c.Plugins {
		at := fmt.Sprintf("plugins[%d]", i)
		if p.Name != "" {
			at += " (" + p.Name + ")"
		}
		switch {
		case !provider.ValidName(p.Name):
			errs = append(errs, fmt.Errorf("%s: name %q must be a provider name: lowercase letters and digits, beginning with a letter", at, p.Name))
		case seen[p.Name]:
			errs = append(errs, fmt.Errorf("%s: name %q is taken by an earlier plugin", at, p.Name))
		case c.Compute[p.Name] != nil:
			errs = append(errs, fmt.Errorf("%s: compute.%s configures a provider of the same name; a plugin's block is its settings: key", at, p.Name))
		}
		seen[p.Name] = true
		if !filepath.IsAbs(p.Path) {
			errs = append(errs, fmt.Errorf("%s: path %q must be the binary's absolute path", at, p.Path))
		}
		if sum, err := hex.DecodeString(p.SHA256); err != nil || len(sum) != 32 {
			errs = append(errs, fmt.Errorf("%s: sha256 must be the binary's SHA-256 in hex (64 digits), as sha256sum prints it", at))
		}
		for _, k := range slices.Sorted(maps.Keys(p.Env)) {
			if !envName.MatchString(k) {
				errs = append(errs, fmt.Errorf("%s: env: %q is not an environment variable name", at, k))
			}
		}
	}
	return errs
}

// PluginSettings is the plugin's settings block as JSON; nil when it has
// none.
func (p Plugin) PluginSettings() (json.RawMessage, error) {
	if p.Settings == nil {
		return nil, nil
	}
	b, err := json.Marshal(p.Settings)
	if err != nil {
		return nil, fmt.Errorf("config: plugins (%s): settings: %w", p.Name, err)
	}
	return b, nil
}

// Environ is the plugin's env as KEY=VALUE entries, sorted.
func (p Plugin) Environ() []string {
	out := make([]string, 0, len(p.Env))
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		out = append(out, k+"="+p.Env[k])
	}
	return out
}

// HasPlugin reports whether a plugin of the plugins block is called name.
func (c Config) HasPlugin(name string) bool {
	return slices.ContainsFunc(c.Plugins, func(p Plugin) bool { return p.Name == name })
}
