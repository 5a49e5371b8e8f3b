package nomadtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/poll"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// The agent testservers/build makes is the one Start looks for, and it is
// built against the Nomad API module landlord uses.
func TestVersionsAgree(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "..")
	script, err := os.ReadFile(filepath.Join(root, "testservers", "build"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^NOMAD=(v\S+)$`).FindSubmatch(script)
	if m == nil || string(m[1]) != Version {
		t.Errorf("testservers/build builds Nomad %s, nomadtest.Version is %s", m, Version)
	}
	built := regexp.MustCompile(`(?m)^NOMAD_API=(v\S+)$`).FindSubmatch(script)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	used := regexp.MustCompile(`(?m)^\s*github.com/hashicorp/nomad/api (v\S+)`).FindSubmatch(gomod)
	if built == nil || used == nil || string(built[1]) != string(used[1]) {
		t.Errorf("testservers/build builds the agent against nomad/api %s, landlord uses %s", built, used)
	}
}

// A service job of the echo image runs on the agent: its dynamic port
// answers on 127.0.0.1, its deployment succeeds, and purging the job
// leaves no container.
func TestServiceJob(t *testing.T) {
	t.Parallel()
	a := Start(t)
	image := dockertest.EchoImage(t)[0]
	const id = "nomadtest-echo"

	job := echoJob(id, image)
	if _, _, err := a.Client.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	purged := false
	t.Cleanup(func() {
		if !purged {
			_, _, _ = a.Client.Jobs().Deregister(id, true, nil)
		}
	})

	alloc := waitRunning(t, a, id)
	var port *api.PortMapping
	for i, p := range alloc.AllocatedResources.Shared.Ports {
		if p.Label == "http" {
			port = &alloc.AllocatedResources.Shared.Ports[i]
		}
	}
	if port == nil || port.HostIP != "127.0.0.1" || port.To != 8080 {
		t.Fatalf("port http: %+v, want a 127.0.0.1 host port to 8080", port)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", port.Value)
	poll.Until(t, "GET "+url, 30*time.Second, func() (bool, string) {
		resp, err := http.Get(url)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	if ids := a.Containers(t, id); len(ids) != 1 {
		t.Errorf("containers of %s: %q, want one", id, ids)
	}
	poll.Until(t, "the deployment succeeds", 60*time.Second, func() (bool, string) {
		d, _, err := a.Client.Jobs().LatestDeployment(id, nil)
		if err != nil || d == nil {
			return false, fmt.Sprint(err)
		}
		return d.Status == api.DeploymentStatusSuccessful, d.Status + ": " + d.StatusDescription
	})

	if _, _, err := a.Client.Jobs().DeregisterOpts(id, &api.DeregisterOptions{Purge: true}, nil); err != nil {
		t.Fatalf("deregister: %v", err)
	}
	purged = true
	poll.Until(t, "no container is left", 60*time.Second, func() (bool, string) {
		ids := a.Containers(t, id)
		return len(ids) == 0, fmt.Sprint(ids)
	})
	if _, _, err := a.Client.Jobs().Info(id, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("the purged job: %v, want 404", err)
	}
}

// echoJob is a service job of one echo task, image, with a dynamic port
// "http" to its 8080.
func echoJob(id, image string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	group := api.NewTaskGroup("web", 1)
	// The default network mode, host: no CNI plugins or pause image.
	group.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http", To: 8080}}}}
	group.Update = &api.UpdateStrategy{
		MinHealthyTime:   new(time.Second),
		HealthyDeadline:  new(30 * time.Second),
		ProgressDeadline: new(time.Minute),
	}
	task := api.NewTask("echo", "docker")
	task.Config = map[string]any{"image": image, "ports": []string{"http"}}
	task.Resources = &api.Resources{CPU: new(100), MemoryMB: new(64)}
	group.AddTask(task)
	job.AddTaskGroup(group)
	return job
}

// An agent killed with its tasks running leaves containers, plugin
// processes and tmpfs mounts; stop removes them all, and the directory.
func TestStopAfterKill(t *testing.T) {
	bin, err := binPath()
	if err != nil {
		report(t, err)
	}
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	a, err := start(bin, false)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = a.stop()
		}
	})
	const id = "nomadtest-killed"
	if _, _, err := a.Client.Jobs().Register(echoJob(id, image), nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	alloc := waitRunning(t, a, id)
	if err := syscall.Kill(a.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.exited
	// What the killed agent left: the test is void without it.
	pgid := a.cmd.Process.Pid
	if alive, err := groupAlive(pgid); !alive {
		t.Errorf("no process of the agent's group outlives it (%v): the plugins were expected to", err)
	}
	if ids := a.Containers(t, id); len(ids) != 1 {
		t.Errorf("containers of the killed agent's job: %q, want one", ids)
	}
	if points, err := mountsUnder(a.dataDir); err != nil || (runtime.GOOS == "linux" && len(points) == 0) {
		t.Errorf("mounts under the killed agent's data directory: %q, %v; want the tasks' tmpfs", points, err)
	}

	stopped = true
	if err := a.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if alive, err := groupAlive(pgid); alive || err != nil {
		t.Errorf("a process of the agent's group lives after stop (%v)", err)
	}
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", labelAllocID+"="+alloc.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d containers of allocation %s left after stop", len(list.Items), alloc.ID)
	}
	if points, err := mountsUnder(a.dir); err != nil || len(points) != 0 {
		t.Errorf("mounts under %s after stop: %q, %v", a.dir, points, err)
	}
	if _, err := os.Stat(a.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the agent's directory after stop: %v, want it removed", err)
	}
}

// The raw_exec driver is enabled, for tests of a provider that uses it.
func TestRawExec(t *testing.T) {
	t.Parallel()
	a := Start(t)
	const id = "nomadtest-raw-exec"
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	group := api.NewTaskGroup("once", 1)
	group.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	group.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	task := api.NewTask("true", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", "exit 0"}}
	task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
	group.AddTask(task)
	job.AddTaskGroup(group)
	if _, _, err := a.Client.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	t.Cleanup(func() { _, _, _ = a.Client.Jobs().Deregister(id, true, nil) })
	poll.Until(t, "the task completes", 60*time.Second, func() (bool, string) {
		allocs, _, err := a.Client.Jobs().Allocations(id, true, nil)
		if err != nil || len(allocs) == 0 {
			return false, fmt.Sprint(len(allocs), " allocations, ", err)
		}
		if allocs[0].ClientStatus == api.AllocClientStatusFailed {
			t.Fatalf("allocation failed: %s", events(allocs[0].TaskStates))
		}
		return allocs[0].ClientStatus == api.AllocClientStatusComplete, allocs[0].ClientStatus
	})
}

// waitRunning waits until job id has one running allocation, and returns
// it; it fails t at once should the allocation fail.
func waitRunning(t *testing.T, a *Agent, id string) *api.Allocation {
	t.Helper()
	var alloc *api.Allocation
	poll.Until(t, "an allocation of "+id+" runs", 60*time.Second, func() (bool, string) {
		stubs, _, err := a.Client.Jobs().Allocations(id, false, nil)
		if err != nil || len(stubs) != 1 {
			return false, fmt.Sprint(len(stubs), " allocations, ", err)
		}
		s := stubs[0]
		if s.ClientStatus == api.AllocClientStatusFailed {
			t.Fatalf("allocation %s failed: %s", s.ID, events(s.TaskStates))
		}
		if s.ClientStatus != api.AllocClientStatusRunning {
			return false, s.ClientStatus + ": " + events(s.TaskStates)
		}
		alloc, _, err = a.Client.Allocations().Info(s.ID, nil)
		return err == nil, fmt.Sprint(err)
	})
	return alloc
}

// events summarizes the task events of an allocation, for failures.
func events(states map[string]*api.TaskState) string {
	var out []string
	for task, s := range states {
		for _, e := range s.Events {
			out = append(out, task+": "+e.Type+" "+e.DisplayMessage)
		}
	}
	return strings.Join(out, "; ")
}
