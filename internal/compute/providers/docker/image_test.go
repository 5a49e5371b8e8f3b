package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute"
)

// echoImages are the tags of the test image, built once per test binary:
// two tags of one image, so that a config can change its image.
var echoImages struct {
	once sync.Once
	tags [2]string
	err  error
	cli  *client.Client
}

// engine returns a client for the local Engine, or skips the test when none
// answers (fails when LANDLORD_REQUIRE_DOCKER=1).
func engine(t *testing.T) *client.Client {
	t.Helper()
	cli, err := client.New(client.FromEnv)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
	}
	if err != nil {
		if os.Getenv("LANDLORD_REQUIRE_DOCKER") == "1" {
			t.Fatalf("no Docker Engine answers and LANDLORD_REQUIRE_DOCKER=1: %v", err)
		}
		t.Skipf("no Docker Engine answers (set LANDLORD_REQUIRE_DOCKER=1 to fail instead): %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// echoImage builds the test image from testdata/echo without a registry:
// a static binary in a FROM scratch image.
func echoImage(t *testing.T) [2]string {
	t.Helper()
	engine(t)
	echoImages.once.Do(func() {
		echoImages.cli, echoImages.err = client.New(client.FromEnv)
		if echoImages.err == nil {
			echoImages.tags, echoImages.err = buildEcho(echoImages.cli)
		}
	})
	if echoImages.err != nil {
		t.Fatalf("build the echo test image: %v", echoImages.err)
	}
	return echoImages.tags
}

// echoBinary is the static echo server, built once per test binary.
var echoBinary = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "landlord-echo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "echo")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./testdata/echo")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %w: %s", err, out)
	}
	return os.ReadFile(bin)
})

// echoSourceHash is a short hash of the echo server's source, the tag of its
// images.
func echoSourceHash() (string, error) {
	src, err := os.ReadFile(filepath.Join("testdata", "echo", "main.go"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:])[:12], nil
}

func buildEcho(cli *client.Client) ([2]string, error) {
	var tags [2]string
	hash, err := echoSourceHash()
	if err != nil {
		return tags, err
	}
	tags = [2]string{"landlord-test/echo:" + hash, "landlord-test/echo:" + hash + "-b"}
	binary, err := echoBinary()
	if err != nil {
		return tags, err
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
			return tags, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return tags, err
		}
	}
	if err := tw.Close(); err != nil {
		return tags, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: tags[:], Remove: true, ForceRemove: true, Labels: map[string]string{"landlord-test": "echo"}})
	if err != nil {
		return tags, fmt.Errorf("image build: %w", err)
	}
	defer res.Body.Close()
	dec := json.NewDecoder(res.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil {
			return tags, fmt.Errorf("image build output: %w", err)
		}
		if msg.Error != "" {
			return tags, fmt.Errorf("image build: %s", msg.Error)
		}
	}
	return tags, nil
}

// removeEchoImage removes the test image, if it was built.
func removeEchoImage() {
	if echoImages.cli == nil || echoImages.err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tag := range echoImages.tags {
		_, _ = echoImages.cli.ImageRemove(ctx, tag, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	}
	_ = echoImages.cli.Close()
}

func TestMain(m *testing.M) {
	code := m.Run()
	removeEchoImage()
	os.Exit(code)
}

// The registry's refusals are terminal; the Engine's own trouble, even when
// it reads "denied", may pass and is retried.
func TestPullFailureClasses(t *testing.T) {
	for msg, terminal := range map[string]bool{
		"pull access denied for acme/app, repository does not exist or may require 'docker login': denied: requested access to the resource is denied": true,
		"unauthorized: authentication required":                                                    true,
		"manifest unknown: manifest unknown":                                                       true,
		"open /var/lib/docker/tmp/GetImageBlob123: permission denied":                              false,
		"Get \"https://registry.example/v2/\": dial tcp 10.0.0.1:443: connect: connection refused": false,
	} {
		err := pullFailure("acme/app:1", errors.New(msg))
		if got := compute.IsTerminal(err); got != terminal {
			t.Errorf("pullFailure(%q): terminal = %v, want %v", msg, got, terminal)
		}
	}
}
