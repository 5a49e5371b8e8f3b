package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	res := mustRunCLI(t, nil, exitOK, "", "version")
	if !strings.HasPrefix(res.stdout, "landlord ") || !strings.Contains(res.stdout, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")") {
		t.Errorf("version: %q", res.stdout)
	}
	res = mustRunCLI(t, nil, exitOK, "", "version", "-o", "json")
	var info struct{ Version, Platform string }
	if err := json.Unmarshal([]byte(res.stdout), &info); err != nil || info.Version == "" || info.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version -o json: %q (%v)", res.stdout, err)
	}
	mustRunCLI(t, nil, exitUsage, "", "version", "-o", "yaml")
}
