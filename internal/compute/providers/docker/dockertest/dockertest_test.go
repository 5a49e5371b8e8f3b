package dockertest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	RemoveEchoImages()
	os.Exit(code)
}

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
	want := regexp.MustCompile(`^landlord-test/echo:[0-9a-f]{12}-dockertest$`)
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
