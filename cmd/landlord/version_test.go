package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	res := mustRunCLI(t, nil, exitOK, "", "version")
	if !strings.HasPrefix(res.stdout, "landlord ") || !strings.Contains(res.stdout, runtime.Version()) {
		t.Errorf("version: %q", res.stdout)
	}
	info := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, tt := range []struct {
		set  string
		info *debug.BuildInfo
		want string
	}{
		{"v1.2.3", info, "landlord v1.2.3 (commit 0123456789ab, modified, "},
		{"", info, "landlord v0.3.0 (commit 0123456789ab, modified, "},
		{"", &debug.BuildInfo{}, "landlord (devel) ("},
		{"", nil, "landlord (devel) ("},
	} {
		if got := versionString(tt.set, tt.info); !strings.HasPrefix(got, tt.want) {
			t.Errorf("versionString(%q) = %q, want %q…", tt.set, got, tt.want)
		}
	}
}
