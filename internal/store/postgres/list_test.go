package postgres

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func TestPrefixEnd(t *testing.T) {
	top := string(utf8.MaxRune)
	tests := []struct {
		prefix, want string
		bounded      bool
	}{
		{"a", "b", true},
		{"beta-0", "beta-1", true},
		{"a\x7f", "a\u0080", true},
		{"aé", "aê", true},
		{"a\u00bf", "a\u00c0", true}, // C2 BF → C3 80, not C2 C0
		{"a\ud7ff", "a\ue000", true}, // over the surrogates
		{"a" + top, "b", true},
		{"a" + top + top, "b", true},
		{top, "", false},
	}
	for _, tt := range tests {
		got, bounded := prefixEnd(tt.prefix)
		if got != tt.want || bounded != tt.bounded {
			t.Errorf("prefixEnd(%q) = %q, %v; want %q, %v", tt.prefix, got, bounded, tt.want, tt.bounded)
		}
		if !bounded {
			continue
		}
		if !utf8.ValidString(got) || got <= tt.prefix {
			t.Errorf("prefixEnd(%q) = %q: not valid UTF-8 or not after the prefix", tt.prefix, got)
		}
		for _, s := range []string{tt.prefix, tt.prefix + "\x01", tt.prefix + top, tt.prefix + top + "z"} {
			if s >= got {
				t.Errorf("prefixEnd(%q) = %q is not after %q", tt.prefix, got, s)
			}
		}
	}
}

// Prefixes no name can start with, even some PostgreSQL cannot hold as
// text, list nothing rather than fail.
func TestNamePrefixOutsideNames(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	mustCreate(t, s, "alpha")
	for _, prefix := range []string{"é", "\xff", "a\x00", string(utf8.MaxRune), "A", "alpha-"} {
		page, err := s.List(ctx, tenant.ListOptions{NamePrefix: prefix})
		if err != nil || len(page.Tenants) != 0 {
			t.Errorf("List with prefix %q = %v, %v; want nothing", prefix, page, err)
		}
	}
	page, err := s.List(ctx, tenant.ListOptions{NamePrefix: "alph"})
	if err != nil || len(page.Tenants) != 1 {
		t.Errorf("List with prefix \"alph\" = %v, %v; want alpha", page, err)
	}
}

// The name-prefix filter is served by an index, also when the statement is
// prepared and run again and again, as pgx does.
func TestNamePrefixUsesIndex(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	_, err := s.pool.Exec(ctx, `INSERT INTO tenants (id, name, provider, compute_config, status, status_changed_at, generation, version, created_at, updated_at)
		SELECT gen_random_uuid(), chr(97 + i % 26) || '-' || i, 'mock', '{}', 'ready', now(), 1, 1, now(), now()
		FROM generate_series(1, 5000) AS i`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `ANALYZE tenants`); err != nil {
		t.Fatal(err)
	}
	q, args, ok, err := listQuery(tenant.ListOptions{NamePrefix: "q-12"}, "", tenant.DefaultPageSize)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	plan := func(what, q string, args ...any) {
		t.Helper()
		rows, err := conn.Query(ctx, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(lines, "\n")
		t.Logf("%s plan of\n%s\n%s", what, q, text)
		if !strings.Contains(text, "tenants_name_prefix_idx") {
			t.Errorf("the %s plan does not use tenants_name_prefix_idx", what)
		}
	}
	plan("custom", "EXPLAIN "+q, args...)

	// pgx caches prepared statements; after five executions PostgreSQL
	// may switch a statement to its generic plan, if that looks no dearer.
	if _, err := conn.Exec(ctx, `PREPARE list_by_prefix AS `+q); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `DEALLOCATE list_by_prefix`)
	for range 10 {
		if _, err := conn.Exec(ctx, `EXECUTE list_by_prefix ('q-12', 'q-13', 51)`); err != nil {
			t.Fatal(err)
		}
	}
	plan("cached", `EXPLAIN EXECUTE list_by_prefix ('q-12', 'q-13', 51)`)
}
