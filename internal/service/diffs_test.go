package service

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// TestPlanDiffsBounded: however many different diffs a fleet plan's
// tenants have, and however long their values, what it keeps (and
// answers) of them is at most MaxFleetPlanDiffBytes; a diff past that
// says how many changes it has, and its tenants still refer to it.
func TestPlanDiffsBounded(t *testing.T) {
	d := newPlanDiffs()
	long := strings.Repeat("é", 1000) // 2,000 bytes
	const tenants = 300
	for i := range tenants {
		changes := make([]provider.Change, 150)
		for j := range changes {
			changes[j] = provider.Change{Field: fmt.Sprintf("containers/app/env/K%d", j), From: long, To: fmt.Sprintf("%s%d", long, i)}
		}
		for range 2 { // two tenants with each diff
			if id := d.add(changes); id != fmt.Sprintf("d%d", i+1) {
				t.Fatalf("tenant %d's diff is %q, want d%d", i, id, i+1)
			}
		}
	}
	if d.add(nil) != "" {
		t.Error("no change has a diff")
	}
	size, listed := 0, 0
	for _, fd := range d.list {
		if fd.Tenants != 2 || len(fd.Changes)+fd.ChangesOmitted != 150 || len(fd.Changes) > wire.MaxDiffChanges {
			t.Fatalf("diff %s: %d tenants, %d changes and %d omitted; want 2 tenants, at most %d of 150 changes listed",
				fd.ID, fd.Tenants, len(fd.Changes), fd.ChangesOmitted, wire.MaxDiffChanges)
		}
		if len(fd.Changes) > 0 {
			listed++
		}
		for _, c := range fd.Changes {
			if !utf8.ValidString(c.To) || !strings.HasSuffix(c.To, "… (2003 bytes)") && !strings.HasSuffix(c.To, "… (2002 bytes)") && !strings.HasSuffix(c.To, "… (2001 bytes)") {
				t.Fatalf("diff %s: value %q is not cut at a character, saying its size", fd.ID, c.To)
			}
			size += len(c.Field) + len(c.From) + len(c.To)
		}
	}
	if size > wire.MaxFleetPlanDiffBytes || listed == 0 || listed == tenants {
		t.Errorf("diffs list %d bytes in %d of %d diffs; want at most %d bytes, some listed and some not", size, listed, tenants, wire.MaxFleetPlanDiffBytes)
	}
}
