package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/server"
)

// providerDoc is the document whose providers section is generated from
// providerTable.
const providerDoc = "../../docs/compute-providers.md"

// The markers around the generated section.
const (
	providerDocBegin = "<!-- providers:begin -->"
	providerDocEnd   = "<!-- providers:end -->"
)

// renderProviderDoc is the generated section of providerDoc, markers
// included: the providers of providerTable with their summaries.
func renderProviderDoc() string {
	var b strings.Builder
	b.WriteString(providerDocBegin + "\n")
	b.WriteString("<!-- Generated from providerTable (cmd/landlord/providers.go) by go generate ./cmd/landlord; do not edit. -->\n\n")
	b.WriteString("| provider | runs tenants on |\n| --- | --- |\n")
	entries := slices.Clone(providerTable)
	slices.SortFunc(entries, func(a, b server.ProviderFactory) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range entries {
		b.WriteString("| `" + e.Name + "` | " + strings.ReplaceAll(e.Summary, "|", `\|`) + " |\n")
	}
	b.WriteString(providerDocEnd)
	return b.String()
}

// The providers section of docs/compute-providers.md lists the providers of
// this build; -update (go generate ./cmd/landlord) rewrites it.
func TestProviderDocIsCurrent(t *testing.T) {
	b, err := os.ReadFile(providerDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	begin, end := strings.Index(doc, providerDocBegin), strings.Index(doc, providerDocEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no section between %s and %s", providerDoc, providerDocBegin, providerDocEnd)
	}
	got, want := doc[begin:end+len(providerDocEnd)], renderProviderDoc()
	if got == want {
		return
	}
	if *updateGolden {
		if err := os.WriteFile(providerDoc, []byte(doc[:begin]+want+doc[end+len(providerDocEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the providers section of %s is out of date; run go generate ./cmd/landlord (-got +want):\n%s", providerDoc, cmp.Diff(got, want))
}
