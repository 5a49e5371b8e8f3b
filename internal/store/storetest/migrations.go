package storetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// CheckMigrationLog fails t unless log, what a store of database wrote
// (JSON lines) while it migrated a new database, has at least one
// migration, each in the one line both stores use: "database migrated"
// with database, version, migration (the file's name) and duration_ms (a
// number of milliseconds, not a duration in nanoseconds).
func CheckMigrationLog(t *testing.T, log []byte, database string) {
	t.Helper()
	var lines int
	sc := bufio.NewScanner(bytes.NewReader(log))
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
		migration, _ := l["migration"].(string)
		if l["database"] != database || !isNumber || ms < 0 || ms > 60_000 || !strings.HasSuffix(migration, ".sql") || strings.Contains(migration, "/") {
			t.Errorf("line %s", sc.Bytes())
		}
	}
	if lines == 0 {
		t.Errorf("no migration was logged:\n%s", log)
	}
}
