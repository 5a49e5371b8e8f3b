package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// staticLandlord is this command built as the README's quickstart builds
// it (CGO_ENABLED=0), once per test binary.
var staticLandlord = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "landlord-demo-static-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "landlord")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("CGO_ENABLED=0 go build: %w\n%s", err, out)
	}
	return bin, nil
})

// The README's quickstart on a Docker Engine without a registry: `landlord
// demo image` builds the demo image from a static landlord (again, it does
// nothing), a tenant of it created with --wait gets ready through `landlord
// serve` with the docker provider, and its endpoint serves the page with
// the tenant's name and its environment's names, never a secret's value;
// `set` with other args replaces it.
func TestDemoQuickstartOnDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds landlord and runs it on the Engine")
	}
	cli := dockertest.Engine(t)
	bin, err := staticLandlord()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(bin)) })
	ref := "landlord-test/demo:" + dockertest.RunID()
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})

	start := time.Now()
	res := mustRunCLI(t, nil, exitOK, "", "demo", "image", "--binary", bin, "--tag", ref)
	t.Logf("landlord demo image (%s):\n%s", time.Since(start).Round(time.Millisecond), res.stdout)
	mustContain(t, "demo image", res.stdout, "built "+ref, `--config '{"image":"`+ref+`","args":["<tenant name>"],"ports":[{"container_port":8080}]}'`)
	start = time.Now()
	res = mustRunCLI(t, nil, exitOK, "", "demo", "image", "--binary", bin, "--tag", ref)
	t.Logf("again (%s): %s", time.Since(start).Round(time.Millisecond), res.stdout)
	mustContain(t, "demo image again", res.stdout, ref+" is up to date")

	// landlord serve with the docker provider's defaults, under the tests'
	// label prefix (see dockertest.Prefix).
	prefix := dockertest.Prefix("lltest")
	t.Cleanup(func() { removeNamed(cli, prefix) })
	l := servetest.New(t, servetest.Options{Config: "compute:\n  docker:\n    label_prefix: " + prefix + "\n    stop_timeout: 2s\n    address_pool: " + dockertest.AddressPool + "\n"})
	l.Start()
	addr := "http://" + l.Addr()

	const secret = "demo-secret-value-1234"
	config := `{"image":"` + ref + `","args":["acme"],"ports":[{"container_port":8080}],"env":{"GREETING":"hello"},"secrets":{"API_TOKEN":"` + secret + `"}}`
	mustRunCLI(t, nil, exitOK, "", "create", "acme", "--config", config, "--wait", "--timeout", "2m", "--addr", addr)
	page := demoPage(t, addr, "acme")
	mustContain(t, "the demo page", page, "landlord demo: tenant acme", "API_TOKEN", "GREETING", "names only")
	for _, value := range []string{secret, "hello"} {
		if strings.Contains(page, value) {
			t.Errorf("the demo page shows the value %q:\n%s", value, page)
		}
	}

	config = strings.Replace(config, `"args":["acme"]`, `"args":["acme","--tier","gold"]`, 1)
	mustRunCLI(t, nil, exitOK, "", "set", "acme", "--config", config, "--wait", "--timeout", "2m", "--addr", addr)
	mustContain(t, "the demo page after set", demoPage(t, addr, "acme"), "args:     --tier gold")
	mustRunCLI(t, nil, exitOK, "", "delete", "acme", "--wait", "--timeout", "2m", "--addr", addr)
}

// demoPage GETs the page at the tenant's endpoint for port 8080, as a user
// would after `landlord get`.
func demoPage(t *testing.T, addr, name string) string {
	t.Helper()
	var tn llclient.Tenant
	if err := json.Unmarshal([]byte(mustRunCLI(t, nil, exitOK, "", "get", name, "-o", "json", "--addr", addr).stdout), &tn); err != nil {
		t.Fatal(err)
	}
	for _, e := range tn.Endpoints {
		if e.ContainerPort != 8080 {
			continue
		}
		var page string
		poll.Until(t, "GET http://"+e.Address+"/ answers 200", 20*time.Second, func() (bool, string) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.Address+"/", nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return false, err.Error()
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			page = string(body)
			return err == nil && res.StatusCode == http.StatusOK, fmt.Sprintf("%s: %v", res.Status, err)
		})
		return page
	}
	t.Fatalf("tenant %s has no endpoint for port 8080: %+v", name, tn.Endpoints)
	return ""
}

// removeNamed removes the containers and networks whose names start with
// prefix: what a failed test left.
func removeNamed(cli *client.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := client.Filters{}.Add("name", prefix+"-")
	if cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f}); err == nil {
		for _, c := range cs.Items {
			_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
		}
	}
	if ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err == nil {
		for _, n := range ns.Items {
			_, _ = cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		}
	}
}
