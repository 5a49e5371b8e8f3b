package build

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestFrom(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"},
		{Key: "vcs.time", Value: "2026-11-28T22:05:00Z"},
	}}
	tail := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	for _, tt := range []struct {
		name                  string
		version, commit, date string
		info                  *debug.BuildInfo
		want                  string
	}{
		{"a release", "v1.2.3", "fedcba9876543210", "2026-12-01T10:00:00+01:00", info,
			"landlord v1.2.3 (commit fedcba987654, built 2026-12-01T09:00:00Z, " + tail},
		{"the toolchain's record", "", "", "", info,
			"landlord v0.3.0 (commit 0123456789ab, modified, built 2026-11-28T22:05:00Z, " + tail},
		{"a version alone", "v1.2.3", "", "", info,
			"landlord v1.2.3 (commit 0123456789ab, modified, built 2026-11-28T22:05:00Z, " + tail},
		{"nothing recorded", "", "", "", &debug.BuildInfo{}, "landlord (devel) (" + tail},
		{"no build information", "", "", "", nil, "landlord (devel) (" + tail},
		{"a bad date", "", "", "yesterday", nil, "landlord (devel) (" + tail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := from(tt.version, tt.commit, tt.date, tt.info).String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if d := from("", "", "", info).Date; !d.Equal(time.Date(2026, 11, 28, 22, 5, 0, 0, time.UTC)) {
		t.Errorf("date %v", d)
	}
}
