package dockertest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// The tags name this package's binary and change with the echo server's
// source; neither is "latest".
func TestEchoTags(t *testing.T) {
	if got := owner(); got != "dockertest" {
		t.Errorf("owner() = %q, want dockertest (the package of this test binary)", got)
	}
	src, err := os.ReadFile(filepath.Join("echo", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, echoSource) {
		t.Error("the embedded echo source differs from echo/main.go")
	}
	tags := EchoTags()
	want := regexp.MustCompile(`^landlord-test/echo:[0-9a-f]{12}-dockertest-` + RunID() + `$`)
	if !want.MatchString(tags[0]) || tags[1] != tags[0]+"-b" {
		t.Errorf("EchoTags() = %q, want %s and the same with -b", tags, want)
	}
	old := echoSource
	t.Cleanup(func() { echoSource = old })
	echoSource = append(slices.Clone(old), '\n')
	if changed := EchoTags(); changed == tags {
		t.Errorf("EchoTags() = %q whatever the source", changed)
	}
}

// The two tags are one image, which runs the echo server.
func TestEchoImage(t *testing.T) {
	cli := Engine(t)
	tags := EchoImage(t)
	ctx := context.Background()
	var ids []string
	for _, tag := range tags {
		img, err := cli.ImageInspect(ctx, tag)
		if err != nil {
			t.Fatalf("inspect %s: %v", tag, err)
		}
		if got := img.Config.Entrypoint; !slices.Equal(got, []string{"/echo"}) {
			t.Errorf("%s: entrypoint %q, want /echo", tag, got)
		}
		if got := img.Config.Labels["landlord-test"]; got != "echo" {
			t.Errorf("%s: label landlord-test=%q, want echo", tag, got)
		}
		ids = append(ids, img.ID)
	}
	if ids[0] != ids[1] {
		t.Errorf("the tags are two images: %q", ids)
	}
	if again := EchoImage(t); again != tags {
		t.Errorf("a second EchoImage = %q, want the first's %q", again, tags)
	}
}

// A name's run id follows the base and a dash, and is followed by a dash,
// a dot or nothing.
func TestRunOf(t *testing.T) {
	for name, want := range map[string]string{
		"/lltest-ab12cdef34-acme-1234abcd-app": "ab12cdef34",
		"lltest-ab12cdef34-shared":             "ab12cdef34",
		"lltest-ab12cdef34.managed-by":         "ab12cdef34",
		"lltest-ab12cdef34":                    "ab12cdef34",
		"lltest-pull-09011000-app":             "", // made before runs had ids
		"lltest-ab12cdef345-x":                 "",
		"lltest-AB12cdef34-x":                  "",
		"other-ab12cdef34-x":                   "",
	} {
		if got := runOf(name, "lltest"); got != want {
			t.Errorf("runOf(%q) = %q, want %q", name, got, want)
		}
	}
	if id := RunID(); !validRunID(id) || runOf(Prefix("lltest")+"-x", "lltest") != id {
		t.Errorf("RunID() = %q is not found again in its Prefix", id)
	}
}

// What no run here can vouch for (another host's, or older than run ids)
// is left over once older than StaleAfter; an ended run's at once.
func TestEndedBy(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	young, old := now.Add(-time.Hour), now.Add(-StaleAfter-time.Minute)
	gone := hostTag(dir) + "abcdef" // no lock file
	for _, c := range []struct {
		id      string
		created time.Time
		want    bool
	}{
		{"", young, false},
		{"", old, true},
		{"zzzz" + "abcdef", young, false},
		{"zzzz" + "abcdef", old, true},
		{gone, young, true},
	} {
		if got := ended(dir, c.id, c.created, now); got != c.want {
			t.Errorf("ended(%q, created %s ago) = %v, want %v", c.id, now.Sub(c.created).Round(time.Minute), got, c.want)
		}
	}
}
