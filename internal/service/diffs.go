package service

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Diff is one set of changes that some of a fleet plan's tenants share,
// bounded as wire.FleetPlanDiff says: values cut to wire.MaxChangeValue
// bytes, at most wire.MaxDiffChanges changes, and at most
// wire.MaxFleetPlanDiffBytes of changes in a plan.
type Diff struct {
	ID             string
	Tenants        int
	Changes        []provider.Change
	ChangesOmitted int
}

// planDiffs are the different changes of a fleet plan's tenants, each
// kept once.
type planDiffs struct {
	list  []Diff
	byKey map[[sha256.Size]byte]int
	bytes int // of the changes listed
}

func newPlanDiffs() *planDiffs {
	return &planDiffs{list: []Diff{}, byKey: map[[sha256.Size]byte]int{}}
}

// add counts a tenant's changes and returns the ID of their diff, or ""
// when there are none. Changes that differ, however far into a value,
// are different diffs.
func (d *planDiffs) add(changes []provider.Change) string {
	if len(changes) == 0 {
		return ""
	}
	h := sha256.New()
	for _, c := range changes {
		for _, v := range []string{c.Field, c.From, c.To} {
			_ = binary.Write(h, binary.BigEndian, uint64(len(v)))
			_, _ = io.WriteString(h, v)
		}
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if i, ok := d.byKey[key]; ok {
		d.list[i].Tenants++
		return d.list[i].ID
	}
	fd := Diff{ID: fmt.Sprintf("d%d", len(d.list)+1), Tenants: 1, Changes: []provider.Change{}}
	shown := changes[:min(len(changes), wire.MaxDiffChanges)]
	cut := make([]provider.Change, len(shown))
	size := 0
	for i, c := range shown {
		cut[i] = provider.Change{Field: cutValue(c.Field), From: cutValue(c.From), To: cutValue(c.To)}
		size += len(cut[i].Field) + len(cut[i].From) + len(cut[i].To)
	}
	if d.bytes+size <= wire.MaxFleetPlanDiffBytes {
		fd.Changes, d.bytes = cut, d.bytes+size
	}
	fd.ChangesOmitted = len(changes) - len(fd.Changes)
	d.byKey[key] = len(d.list)
	d.list = append(d.list, fd)
	return fd.ID
}

// cutValue is v, or its first MaxChangeValue bytes (whole characters)
// and its length when it is longer. The result shares no memory with v,
// which may be a large config's.
func cutValue(v string) string {
	if len(v) <= wire.MaxChangeValue {
		return v
	}
	n := wire.MaxChangeValue
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return v[:n] + fmt.Sprintf("… (%d bytes)", len(v))
}
