package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// echoSource is the echo server's source, whose hash tags its images.
//
//go:embed echo/main.go
var echoSource []byte

// EchoRepository is the repository of the echo image's tags.
const EchoRepository = "landlord-test/echo"

// echoImages are the tags of this binary's echo image, built once.
var echoImages struct {
	once sync.Once
	tags [2]string
	err  error
	cli  *client.Client // the client that built them, closed by removeEchoImages
}

// EchoImage returns two tags of the echo image, building it on first use
// (see the package doc). It skips or fails tb as Engine does when no
// Engine answers, and fails it when the image cannot be built.
func EchoImage(tb testing.TB) [2]string {
	tb.Helper()
	Engine(tb)
	echoImages.once.Do(func() {
		echoImages.cli, echoImages.err = ping()
		if echoImages.err == nil {
			echoImages.tags = EchoTags()
			echoImages.err = buildEcho(echoImages.cli, echoImages.tags)
		}
	})
	if echoImages.err != nil {
		tb.Fatalf("dockertest: build the echo test image: %v", echoImages.err)
	}
	return echoImages.tags
}

// EchoTags returns the tags EchoImage builds in this test binary, without
// building anything.
func EchoTags() [2]string {
	sum := sha256.Sum256(echoSource)
	tag := EchoRepository + ":" + hex.EncodeToString(sum[:])[:12] + "-" + owner() + "-" + RunID()
	return [2]string{tag, tag + "-b"}
}

// removeEchoImages removes the tags this test binary built, if any, and
// only those: other packages' and runs' tests may still run theirs. End
// calls it.
func removeEchoImages() {
	if echoImages.cli == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tag := range echoImages.tags {
		_, _ = echoImages.cli.ImageRemove(ctx, tag, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	}
	_ = echoImages.cli.Close()
	echoImages.cli = nil
}

// owner names the running test binary for its tags: the last element of
// its package's import path ("docker" for docker.test), else of its file.
func owner() string {
	name := filepath.Base(os.Args[0])
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
		name = path.Base(bi.Path)
	}
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".exe"), ".test")
	// A tag is [A-Za-z0-9_.-]; keep it lowercase for readability.
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, name)
	if name == "" {
		return "test"
	}
	return name
}

// marker finds this package's import path, and from it the echo server's.
type marker struct{}

// EchoBinary returns the echo server built as a static Linux binary, once
// per process.
var EchoBinary = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "landlord-echo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "echo")
	pkg := reflect.TypeFor[marker]().PkgPath() + "/echo"
	// Built by import path from the test's working directory, inside the
	// module.
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %w: %s", pkg, err, out)
	}
	return os.ReadFile(bin)
})

// buildEcho builds the echo image under tags: the binary in a FROM scratch
// image, from a context made in memory.
func buildEcho(cli *client.Client, tags [2]string) error {
	binary, err := EchoBinary()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{
		{"Dockerfile", 0o644, []byte("FROM scratch\nCOPY echo /echo\nENTRYPOINT [\"/echo\"]\n")},
		{"echo", 0o755, binary},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// No cache, and labels of the owner and the run: test binaries of
	// several packages and runs build at once, and each removes its image
	// with the layers under it when it ends, so no two may share an image
	// or an intermediate one.
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: tags[:], Remove: true, ForceRemove: true, NoCache: true,
		Labels: map[string]string{"landlord-test": "echo", "landlord-test.owner": owner(), runLabel: RunID()}})
	if err != nil {
		return fmt.Errorf("image build: %w", err)
	}
	defer res.Body.Close()
	dec := json.NewDecoder(res.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("image build output: %w", err)
		}
		if msg.Error != "" {
			return fmt.Errorf("image build: %s", msg.Error)
		}
	}
}
