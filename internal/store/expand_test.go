package store

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// released is, per store, the last migration of a release that shipped
// before the expand-only rule: later ones are held to it.
var released = map[string]int{"postgres": 11, "sqlite": 10}

// contracting are the statements a release beside an older one cannot run:
// each takes away or tightens what the older release reads or writes
// (docs/operations.md, "The version skew landlord promises").
var contracting = []struct {
	re   *regexp.Regexp
	says string
}{
	{regexp.MustCompile(`(?i)\bDROP\s+(TABLE|COLUMN|VIEW|TYPE)\b`), "drops what the older release reads"},
	{regexp.MustCompile(`(?i)\bRENAME\b`), "renames what the older release names"},
	{regexp.MustCompile(`(?i)\bALTER\s+COLUMN\s+\S+\s+(SET\s+NOT\s+NULL|TYPE|SET\s+DATA\s+TYPE)\b`), "tightens or retypes a column the older release writes"},
	{regexp.MustCompile(`(?i)\bADD\s+(COLUMN\s+)?\S+\s+[^,;]*\bNOT\s+NULL\b[^,;]*`), "adds a NOT NULL column"},
}

// expandOnly returns what in the Up part of a goose migration an older
// release could not run beside. An added NOT NULL column with a DEFAULT is
// allowed: the older release's inserts get the default.
func expandOnly(sql string) []string {
	up, _, _ := strings.Cut(sql, "-- +goose Down")
	var lines []string
	for line := range strings.SplitSeq(up, "\n") {
		if code, _, _ := strings.Cut(line, "--"); strings.TrimSpace(code) != "" {
			lines = append(lines, code)
		}
	}
	code := strings.Join(lines, "\n")
	var found []string
	for _, c := range contracting {
		for _, m := range c.re.FindAllString(code, -1) {
			if strings.Contains(strings.ToUpper(m), "DEFAULT") {
				continue
			}
			found = append(found, strings.Join(strings.Fields(m), " ")+": "+c.says)
		}
	}
	return found
}

// TestMigrationsOnlyExpand holds the stores' migrations after the last
// grandfathered one to the expand-only rule: a column is dropped or
// renamed over two releases, the first of which stops using it.
func TestMigrationsOnlyExpand(t *testing.T) {
	for store, last := range released {
		files, err := filepath.Glob(filepath.Join(store, "migrations", "*.sql"))
		if err != nil || len(files) < last {
			t.Fatalf("%s: %d migrations, %v", store, len(files), err)
		}
		for _, f := range files {
			n, err := strconv.Atoi(strings.SplitN(filepath.Base(f), "_", 2)[0])
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if n <= last {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range expandOnly(string(b)) {
				t.Errorf("%s: %s; a release runs beside the one before it, which this breaks: split it over two releases", f, p)
			}
		}
	}
}

func TestExpandOnly(t *testing.T) {
	for sql, want := range map[string]int{
		"-- +goose Up\nALTER TABLE tenants ADD COLUMN region text NOT NULL DEFAULT '';\n-- +goose Down\nALTER TABLE tenants DROP COLUMN region;": 0,
		"-- +goose Up\nALTER TABLE tenants ADD COLUMN region text;\nCREATE INDEX x ON tenants (region);":                                         0,
		"-- +goose Up\n-- We DROP COLUMN nothing here.\nSELECT 1;":                                                                               0,
		"-- +goose Up\nALTER TABLE tenants DROP COLUMN labels;":                                                                                  1,
		"-- +goose Up\nALTER TABLE tenants RENAME COLUMN labels TO tags;":                                                                        1,
		"-- +goose Up\nALTER TABLE tenants ALTER COLUMN name SET NOT NULL;":                                                                      1,
		"-- +goose Up\nALTER TABLE tenants ADD COLUMN region text NOT NULL;":                                                                     1,
		"-- +goose Up\nDROP TABLE plans;":                                                                                                        1,
	} {
		if got := expandOnly(sql); len(got) != want {
			t.Errorf("%q: %v, want %d findings", sql, got, want)
		}
	}
}
