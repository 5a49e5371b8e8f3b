package postgres

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
)

// A migration is logged in the one format both stores use: "database
// migrated" with database, version, migration (the file) and duration_ms,
// not a duration in nanoseconds.
func TestMigrationLogLine(t *testing.T) {
	var buf bytes.Buffer
	mustOpen(t, Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	var lines int
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l["msg"] != "database migrated" {
			continue
		}
		lines++
		if got, want := strings.Join(slices.Sorted(maps.Keys(l)), ","), "database,duration_ms,level,migration,msg,time,version"; got != want {
			t.Errorf("keys %s, want %s: %s", got, want, sc.Bytes())
		}
		ms, isNumber := l["duration_ms"].(float64)
		if l["database"] != "postgres" || !isNumber || ms < 0 || ms > 60_000 || !strings.HasSuffix(l["migration"].(string), ".sql") || strings.Contains(l["migration"].(string), "/") {
			t.Errorf("line %s", sc.Bytes())
		}
	}
	if lines == 0 {
		t.Errorf("no migration was logged:\n%s", buf.String())
	}
}
