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

// contracting are what a release beside an older one cannot run, each
// matched in one statement of the migration's Up part (upper-cased, its
// whitespace folded): each takes away or tightens what the older release
// reads or writes (docs/operations.md, "The version skew landlord
// promises").
var contracting = []struct {
	re   *regexp.Regexp
	says string
}{
	{regexp.MustCompile(`^DROP (TABLE|VIEW|TYPE|SEQUENCE)\b`), "drops what the older release reads"},
	{regexp.MustCompile(`\bDROP (COLUMN )?(IF EXISTS )?"?[A-Z_][A-Z0-9_]*"?( CASCADE| RESTRICT)?$|\bDROP (COLUMN )?(IF EXISTS )?"?[A-Z_][A-Z0-9_]*"?( CASCADE| RESTRICT)?,`), "drops a column the older release reads"},
	{regexp.MustCompile(`\bRENAME\b`), "renames what the older release names"},
	{regexp.MustCompile(`\bALTER (COLUMN )?\S+ (SET NOT NULL|TYPE|SET DATA TYPE|DROP DEFAULT)\b`), "tightens, retypes or takes the default of a column the older release writes"},
	{regexp.MustCompile(`\bADD CONSTRAINT\b|\bADD (CHECK|UNIQUE|FOREIGN KEY|PRIMARY KEY)\b`), "adds a constraint the older release's writes may break"},
	{regexp.MustCompile(`^CREATE UNIQUE INDEX\b`), "adds a uniqueness the older release's writes may break"},
	{regexp.MustCompile(`\bADD (COLUMN )?(IF NOT EXISTS )?\S+ [^,]*\bNOT NULL\b[^,]*`), "adds a NOT NULL column without a DEFAULT"},
}

// expandOnly returns what in the Up part of a goose migration an older
// release could not run beside. An added NOT NULL column with a DEFAULT is
// allowed (the older release's inserts get the default), and so is
// dropping a constraint or an index.
func expandOnly(sql string) []string {
	up, _, _ := strings.Cut(sql, "-- +goose Down")
	var lines []string
	for line := range strings.SplitSeq(up, "\n") {
		if code, _, _ := strings.Cut(line, "--"); strings.TrimSpace(code) != "" {
			lines = append(lines, code)
		}
	}
	var found []string
	for stmt := range strings.SplitSeq(strings.Join(lines, "\n"), ";") {
		stmt = strings.ToUpper(strings.Join(strings.Fields(stmt), " "))
		for _, c := range contracting {
			for _, m := range c.re.FindAllString(stmt, -1) {
				if strings.Contains(m, "DEFAULT") && strings.Contains(c.says, "NOT NULL") {
					continue
				}
				if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(m, "DROP")), "CONSTRAINT") || strings.Contains(m, "DROP INDEX") {
					continue
				}
				found = append(found, strings.TrimSuffix(m, ",")+": "+c.says)
			}
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
