// Package build says which landlord this binary is: its version, the commit
// and time it was built from, and the Go that built it. A release sets the
// version (and, for a build outside Git, the commit and date) with the
// linker:
//
//	go build -trimpath -ldflags "-X github.com/jaxxstorm/landlord/internal/build.version=v1.2.3" ./cmd/landlord
//
// Otherwise each comes from what the Go toolchain records in the binary:
// the module's version (for `go install …@v1.2.3`), the VCS revision, and
// the time of that commit, so that two builds of one commit say the same.
package build

import (
	"runtime"
	"runtime/debug"
	"time"
)

// Set by the linker (-X) when a release is built; empty otherwise.
var (
	version string
	commit  string
	date    string // RFC 3339
)

// Info describes a landlord binary.
type Info struct {
	// Version is the release's version, "(devel)" for a build of a work tree.
	Version string `json:"version"`
	// Commit is the full VCS revision built, empty when unknown; Modified
	// says the work tree had changes that are not in it.
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Date is when the commit was made (or the release says it was built),
	// zero when unknown.
	Date time.Time `json:"date,omitzero"`
	// GoVersion is the Go release that built the binary, and Platform its
	// GOOS/GOARCH.
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// Read returns this binary's Info.
func Read() Info {
	info, _ := debug.ReadBuildInfo()
	return from(version, commit, date, info)
}

// from makes Info of the linker's values and the toolchain's record, the
// linker's first.
func from(version, commit, date string, info *debug.BuildInfo) Info {
	i := Info{Version: version, Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	var vcsTime string
	if info != nil {
		if i.Version == "" {
			i.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if i.Commit == "" {
					i.Commit = s.Value
				}
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true" && commit == ""
			}
		}
	}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	if date == "" {
		date = vcsTime
	}
	if t, err := time.Parse(time.RFC3339, date); err == nil {
		i.Date = t.UTC()
	}
	return i
}

// ShortCommit is the commit's first 12 hex digits, or "".
func (i Info) ShortCommit() string { return i.Commit[:min(len(i.Commit), 12)] }

// String is "landlord VERSION (commit REV[, modified], built DATE, GO PLATFORM)",
// leaving out what is unknown.
func (i Info) String() string {
	out := "landlord " + i.Version + " ("
	if i.Commit != "" {
		out += "commit " + i.ShortCommit()
		if i.Modified {
			out += ", modified"
		}
		out += ", "
	}
	if !i.Date.IsZero() {
		out += "built " + i.Date.Format(time.RFC3339) + ", "
	}
	return out + i.GoVersion + " " + i.Platform + ")"
}
