package release

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
)

// SBOM is a CycloneDX 1.5 software bill of materials (JSON) of the binary
// at path: the binary itself (its SHA-256, version and platform), the Go
// standard library of the release that built it, and every module linked
// into it, as the toolchain recorded them in the binary (debug/buildinfo),
// each with its package URL (pkg:golang/…) and, where the module is
// replaced, the replacement. The module list is the linked one, not the
// whole module graph: a module go.mod requires but no package of which is
// in the binary is not part of what ships. The serial number is derived
// from the binary's digest, so the same binary gets the same document.
func SBOM(path string, m Meta) ([]byte, error) {
	content, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("release: sbom: %w", err)
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("release: sbom: %s has no Go build information: %w", path, err)
	}
	sum := sha256.Sum256(content)
	digest := hex.EncodeToString(sum[:])
	var goos, goarch string
	for _, s := range info.Settings {
		switch s.Key {
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	main := cdxComponent{
		Type: "application", Name: "landlord", Version: m.Version,
		Purl:   goPurl(info.Main.Path, m.Version),
		Hashes: []cdxHash{{Alg: "SHA-256", Content: digest}},
		Properties: []cdxProperty{
			{Name: "landlord:commit", Value: m.Commit},
			{Name: "landlord:platform", Value: goos + "/" + goarch},
		},
	}
	main.BOMRef = main.Purl
	goVersion := strings.TrimPrefix(info.GoVersion, "go")
	std := cdxComponent{Type: "library", Name: "stdlib", Version: goVersion, Purl: goPurl("stdlib", goVersion), Scope: "required"}
	std.BOMRef = std.Purl
	comps := []cdxComponent{std}
	for _, d := range info.Deps {
		mod := d
		if d.Replace != nil {
			mod = d.Replace
		}
		c := cdxComponent{Type: "library", Name: mod.Path, Version: mod.Version, Purl: goPurl(mod.Path, mod.Version), Scope: "required"}
		if d.Replace != nil {
			c.Properties = []cdxProperty{{Name: "landlord:replaces", Value: d.Path + "@" + d.Version}}
		}
		c.BOMRef = c.Purl
		comps = append(comps, c)
	}
	dep := cdxDependency{Ref: main.BOMRef}
	for _, c := range comps {
		dep.DependsOn = append(dep.DependsOn, c.BOMRef)
	}
	bom := cdxBOM{
		Schema:       "http://cyclonedx.org/schema/bom-1.5.schema.json",
		BOMFormat:    "CycloneDX",
		SpecVersion:  "1.5",
		SerialNumber: "urn:uuid:" + uuid.NewSHA1(uuid.NameSpaceURL, []byte("landlord:sbom:"+digest)).String(),
		Version:      1,
		Metadata: cdxMetadata{
			Timestamp: m.Date.UTC().Format(time.RFC3339),
			Tools:     cdxTools{Components: []cdxComponent{{Type: "application", Name: "landlord tools/releaser", Version: m.Version}}},
			Component: main,
		},
		Components:   comps,
		Dependencies: []cdxDependency{dep},
	}
	out, err := json.MarshalIndent(bom, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// goPurl is the package URL of a Go module (purl-spec's golang type): the
// path's segments as namespace and name, each escaped, and the version.
func goPurl(path, version string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = purlEscape(s)
	}
	p := "pkg:golang/" + strings.Join(segs, "/")
	if version != "" {
		p += "@" + purlEscape(version)
	}
	return p
}

// purlEscape percent-encodes what a purl segment may not hold as is.
func purlEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte(".-_~", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// The parts of CycloneDX 1.5's JSON format (https://cyclonedx.org/docs/1.5/json)
// an SBOM uses.
type (
	cdxBOM struct {
		Schema       string          `json:"$schema"`
		BOMFormat    string          `json:"bomFormat"`
		SpecVersion  string          `json:"specVersion"`
		SerialNumber string          `json:"serialNumber"`
		Version      int             `json:"version"`
		Metadata     cdxMetadata     `json:"metadata"`
		Components   []cdxComponent  `json:"components"`
		Dependencies []cdxDependency `json:"dependencies"`
	}
	cdxMetadata struct {
		Timestamp string       `json:"timestamp"`
		Tools     cdxTools     `json:"tools"`
		Component cdxComponent `json:"component"`
	}
	cdxTools struct {
		Components []cdxComponent `json:"components"`
	}
	cdxComponent struct {
		Type       string        `json:"type"`
		BOMRef     string        `json:"bom-ref,omitempty"`
		Name       string        `json:"name"`
		Version    string        `json:"version,omitempty"`
		Scope      string        `json:"scope,omitempty"`
		Purl       string        `json:"purl,omitempty"`
		Hashes     []cdxHash     `json:"hashes,omitempty"`
		Properties []cdxProperty `json:"properties,omitempty"`
	}
	cdxHash struct {
		Alg     string `json:"alg"`
		Content string `json:"content"`
	}
	cdxProperty struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	cdxDependency struct {
		Ref       string   `json:"ref"`
		DependsOn []string `json:"dependsOn"`
	}
)
