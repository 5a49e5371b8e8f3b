package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/poll"
)

// Against the real Engine: Load makes the image; again with the same binary
// it does nothing; with another binary it replaces the image and removes
// the old one, or keeps it while a container uses it. A container of the
// image runs the binary as /landlord demo serve with the config's args.
func TestLoad(t *testing.T) {
	cli := dockertest.Engine(t)
	ctx := context.Background()
	ref := "landlord-test/demo:" + dockertest.RunID()
	t.Cleanup(func() { removeAll(cli, ref) })
	first := mustTiny(t, "")

	start := time.Now()
	res, err := Load(ctx, cli, Options{Binary: first, Ref: ref})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Logf("loaded %s (%d bytes) in %s", ref, res.Size, time.Since(start).Round(time.Millisecond))
	if !res.Loaded || res.ID == "" || res.Replaced != "" || res.Kept != "" {
		t.Errorf("first Load = %+v, want loaded, nothing replaced", res)
	}
	img, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if img.ID != res.ID || img.Os != "linux" || !slices.Equal(img.Config.Entrypoint, entrypoint) || img.Config.User != "65534:65534" {
		t.Errorf("the image: id %s, os %s, entrypoint %q, user %q", img.ID, img.Os, img.Config.Entrypoint, img.Config.User)
	}

	again, err := Load(ctx, cli, Options{Binary: mustTiny(t, ""), Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	if again.Loaded || again.ID != res.ID {
		t.Errorf("Load of the same binary = %+v, want nothing done and id %s", again, res.ID)
	}

	// A container of the image runs the binary with the config's args.
	id := runContainer(t, cli, ref, "acme", "--extra")
	if body := getPublished(t, cli, id); body != "tiny demo serve acme --extra\n" {
		t.Errorf("the container answers %q", body)
	}

	// Another binary replaces the image; the old one is kept while the
	// container uses it.
	second, err := Load(ctx, cli, Options{Binary: mustTiny(t, "second"), Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Loaded || second.ID == res.ID || second.Kept != res.ID || second.KeptBecause == "" || second.Replaced != "" {
		t.Errorf("Load of another binary while a container uses the image = %+v, want loaded, the old %s kept", second, res.ID)
	}
	t.Cleanup(func() { _, _ = cli.ImageRemove(context.Background(), res.ID, client.ImageRemoveOptions{Force: true}) })
	if _, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ImageRemove(ctx, res.ID, client.ImageRemoveOptions{}); err != nil {
		t.Fatal(err)
	}

	third, err := Load(ctx, cli, Options{Binary: mustTiny(t, "third"), Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	if !third.Loaded || third.Replaced != second.ID || third.Kept != "" {
		t.Errorf("Load of a third binary = %+v, want loaded, %s removed", third, second.ID)
	}
	if _, err := cli.ImageInspect(ctx, second.ID); !cerrdefs.IsNotFound(err) {
		t.Errorf("the replaced image %s is still there (%v)", second.ID, err)
	}
}

// A binary the image cannot run is refused before anything is loaded.
func TestLoadRefusesDynamicBinary(t *testing.T) {
	cli := dockertest.Engine(t)
	ref := "landlord-test/demo-refused:" + dockertest.RunID()
	t.Cleanup(func() { removeAll(cli, ref) })
	_, err := Load(context.Background(), cli, Options{Binary: "/bin/sh", Ref: ref})
	if !errors.Is(err, ErrNotStatic) && !errors.Is(err, ErrNotLinux) {
		t.Fatalf("Load of /bin/sh = %v, want ErrNotStatic", err)
	}
	if _, err := cli.ImageInspect(context.Background(), ref); !cerrdefs.IsNotFound(err) {
		t.Errorf("a refused Load left %s (%v)", ref, err)
	}
}

func removeAll(cli *client.Client, ref string) {
	_, _ = cli.ImageRemove(context.Background(), ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
}

// runContainer starts a container of image with args, its port 8080
// published on a loopback port, removed when the test ends.
func runContainer(t *testing.T, cli *client.Client, image string, args ...string) string {
	t.Helper()
	ctx := context.Background()
	port, _ := network.ParsePort("8080/tcp")
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:       "landlord-test-demo-" + dockertest.RunID(),
		Config:     &container.Config{Image: image, Cmd: args, ExposedPorts: network.PortSet{port: {}}},
		HostConfig: &container.HostConfig{PortBindings: network.PortMap{port: {{HostIP: loopback()}}}},
	})
	if err != nil {
		t.Fatalf("create a container of %s: %v", image, err)
	}
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
	})
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatalf("start: %v", err)
	}
	return res.ID
}

// getPublished GETs / of the container's published port 8080, waiting
// until it answers.
func getPublished(t *testing.T, cli *client.Client, id string) string {
	t.Helper()
	var body string
	poll.Until(t, "the container answers on its published port 8080", 20*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		inspect, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last := "port 8080 is not published"
		for p, bindings := range inspect.Container.NetworkSettings.Ports {
			if p.Num() != 8080 || len(bindings) == 0 {
				continue
			}
			res, err := http.Get("http://" + bindings[0].HostIP.String() + ":" + bindings[0].HostPort + "/")
			if err != nil {
				return false, err.Error()
			}
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err == nil && res.StatusCode == http.StatusOK {
				body = string(b)
				return true, ""
			}
			last = fmt.Sprintf("%s, %v", res.Status, err)
		}
		return false, last
	})
	return body
}

func loopback() netip.Addr { return netip.AddrFrom4([4]byte{127, 0, 0, 1}) }
