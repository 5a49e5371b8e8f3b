//go:build unix

package examples_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
)

// quickstartTimeout bounds the whole script: a build, an image, five
// tenant changes waited for. It takes about 10 s with a warm build cache.
const quickstartTimeout = 4 * time.Minute

// quickstart.sh walks the README's quickstart through to its end on the
// Docker Engine, with no registry: every step does what the README says,
// and nothing of it is left on the Engine. The run has a demo image tag,
// a label prefix (so names) and a host port of its own, so that runs side
// by side do not meet.
func TestQuickstartScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds landlord and runs the quickstart on the Docker Engine")
	}
	cli := dockertest.Engine(t)
	for _, tool := range []string{"bash", "curl", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(dockertest.EnvRequire) == "1" {
				t.Fatalf("quickstart.sh needs %s: %v", tool, err)
			}
			t.Skipf("quickstart.sh needs %s: %v", tool, err)
		}
	}
	ctx := context.Background()

	image := "landlord-test/quickstart-demo:" + dockertest.RunID()
	if _, err := cli.ImageInspect(ctx, image); err == nil {
		t.Fatalf("the image %s exists before the test made it", image)
	} else if !cerrdefs.IsNotFound(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), image, client.ImageRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			t.Errorf("remove %s: %v", image, err)
		}
	})

	prefix := dockertest.Prefix("lltest")
	dir := t.TempDir()
	configPath := filepath.Join(dir, "landlord.yaml")
	// The tenants' networks take subnets of the tests' address pool, none
	// of the Engine's default pools, which other programs may hold.
	mustWrite(t, configPath, "compute:\n  docker:\n    label_prefix: "+prefix+"\n    stop_timeout: 2s\n    address_pool: "+dockertest.AddressPool+"\n")

	runCtx, cancel := context.WithTimeout(ctx, quickstartTimeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "bash", "quickstart.sh")
	cmd.Env = append(os.Environ(),
		"LANDLORD_CONFIG="+configPath,
		"QUICKSTART_IMAGE="+image,
		"QUICKSTART_HOST_PORT="+strconv.Itoa(hostPort(t)),
		"TMPDIR="+dir,
	)
	// The script starts landlord serve in the background: on a timeout,
	// kill its whole process group, not bash alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("quickstart.sh (%s):\n%s", time.Since(start).Round(time.Millisecond), out.String())
	if err != nil {
		t.Fatalf("quickstart.sh: %v", err)
	}
	if !strings.Contains(out.String(), "quickstart: every step did what the README says") {
		t.Error("quickstart.sh ended without saying every step passed")
	}

	// The quickstart ends by starting over: nothing of its tenants is left.
	f := client.Filters{}.Add("name", prefix+"-")
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		t.Errorf("container %v is left after the quickstart", c.Names)
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Items {
		t.Errorf("network %s is left after the quickstart", n.Name)
	}
}

// hostPort returns a loopback port from 18000 to 18999 that nothing
// listens on now: outside the range the kernel and the Docker Engine hand
// ports out from, so that no container another test publishes meanwhile
// takes it.
func hostPort(t *testing.T) int {
	t.Helper()
	for _, i := range rand.Perm(1000) {
		port := 18000 + i
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			ln.Close()
			return port
		}
	}
	t.Fatal("no free port from 18000 to 18999")
	return 0
}
