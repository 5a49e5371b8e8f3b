package nomadtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/testbin"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/client"
)

const (
	startTimeout = 90 * time.Second
	// stopTimeout bounds the graceful stop, in which a -dev agent stops
	// its allocations and removes their containers (~2 s).
	stopTimeout = 10 * time.Second
)

// Agent is a running Nomad agent, server and client in one process, shared
// by the tests of one binary.
type Agent struct {
	// Address is the HTTP API's address, "http://127.0.0.1:PORT".
	Address string
	// Client is an API client of Address.
	Client *api.Client
	// NodeID is the ID of the agent's one client node.
	NodeID string
	// LogPath is the agent's log, until Main removes it.
	LogPath string
	// ManagementToken is the bootstrap token of an agent with ACLs
	// (StartWithACL), which Client carries; empty otherwise.
	ManagementToken string

	dir     string
	dataDir string
	docker  *client.Client
	cmd     *exec.Cmd
	exited  chan struct{}
}

// agentConfig is the agent's configuration file; see the package doc. The
// arguments are the data directory and the http, rpc and serf ports.
const agentConfig = `data_dir             = %q
bind_addr            = "127.0.0.1"
disable_update_check = true
log_level            = "INFO"

ports {
  http = %d
  rpc  = %d
  serf = %d
}

advertise {
  http = "127.0.0.1"
  rpc  = "127.0.0.1"
  serf = "127.0.0.1"
}

client {
  enabled           = true
  network_interface = "lo"
  options = {
    "fingerprint.denylist" = "env_aws,env_gce,env_azure,env_digitalocean"
    "driver.allowlist"     = "docker,raw_exec"
  }
}

consul {
  auto_advertise   = false
  server_auto_join = false
  client_auto_join = false
}

plugin "docker" {
  config {
    allow_privileged = false
    extra_labels     = ["job_id", "job_name", "task_group_name", "task_name", "namespace", "node_id", "node_name"]
    volumes {
      enabled = false
    }
    gc {
      image     = false
      container = true
    }
  }
}

plugin "raw_exec" {
  config {
    enabled = true
  }
}
`

// drivers are the task drivers the agent must report healthy to be ready.
var drivers = []string{"docker", "raw_exec"}

// aclConfig turns ACLs on (StartWithACL).
const aclConfig = `
acl {
  enabled = true
}
`

// start runs the agent binary in a new temporary directory and waits until
// its node is ready with healthy drivers; with acl, it enables ACLs and
// bootstraps them first.
func start(bin string, acl bool) (_ *Agent, err error) {
	docker, err := client.New(client.FromEnv)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = docker.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
		cancel()
	}
	if err != nil {
		if docker != nil {
			_ = docker.Close()
		}
		return nil, fmt.Errorf("no Docker Engine answers, and the agent's docker driver needs one: %w", err)
	}
	dir, err := os.MkdirTemp("", "landlord-nomadtest-")
	if err != nil {
		_ = docker.Close()
		return nil, err
	}
	a := &Agent{dir: dir, dataDir: filepath.Join(dir, "data"), LogPath: filepath.Join(dir, "agent.log"), docker: docker, exited: make(chan struct{})}
	// On failure, stop kills what started and removes the directory.
	defer func() {
		if err != nil {
			err = errors.Join(err, a.stop())
		}
	}()

	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "agent.hcl")
	text := fmt.Sprintf(agentConfig, a.dataDir, ports[0], ports[1], ports[2])
	if acl {
		text += aclConfig
	}
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(a.LogPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	a.cmd = exec.Command(bin, "agent", "-dev", "-config", config)
	a.cmd.Dir = dir
	a.cmd.Stdout, a.cmd.Stderr = log, log
	// Its own process group, which its plugin children (logmon,
	// docker_logger) join, so that stop can kill them all; killed with the
	// test binary should it die first.
	a.cmd.SysProcAttr = procAttr()
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start nomad: %w", err)
	}
	go func() { _ = a.cmd.Wait(); close(a.exited) }()

	a.Address = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	if a.Client, err = api.NewClient(&api.Config{Address: a.Address}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if acl {
		if err := a.bootstrap(ctx); err != nil {
			return nil, err
		}
	}
	return a, a.waitReady(ctx)
}

// bootstrap bootstraps the ACLs once the server has a leader, and gives
// Client the management token.
func (a *Agent) bootstrap(ctx context.Context) error {
	for {
		token, _, err := a.Client.ACLTokens().Bootstrap(nil)
		if err == nil {
			a.ManagementToken = token.SecretID
			a.Client.SetSecretID(token.SecretID)
			return nil
		}
		if err := a.alive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nomad agent: bootstrap the ACLs: %w\n%s", err, a.tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReady waits until the agent's node is ready and its drivers are
// detected and healthy, and records the node's ID.
func (a *Agent) waitReady(ctx context.Context) error {
	state := "the HTTP API did not answer"
	for {
		if id, s := a.readiness(); id != "" {
			a.NodeID = id
			return nil
		} else if s != "" {
			state = s
		}
		if err := a.alive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nomad agent not ready within %s: %s\n%s", startTimeout, state, a.tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readiness returns the node's ID once it is ready, else what it waits on.
func (a *Agent) readiness() (nodeID, waiting string) {
	nodes, _, err := a.Client.Nodes().List(nil)
	if err != nil {
		return "", ""
	}
	if len(nodes) != 1 {
		return "", fmt.Sprintf("%d client nodes registered, want 1", len(nodes))
	}
	if nodes[0].Status != api.NodeStatusReady {
		return "", fmt.Sprintf("node %s is %q", nodes[0].ID, nodes[0].Status)
	}
	node, _, err := a.Client.Nodes().Info(nodes[0].ID, nil)
	if err != nil {
		return "", fmt.Sprintf("node %s: %v", nodes[0].ID, err)
	}
	for _, name := range drivers {
		d := node.Drivers[name]
		if d == nil || !d.Detected || !d.Healthy {
			return "", fmt.Sprintf("driver %s of node %s: %+v", name, node.ID, d)
		}
	}
	return node.ID, ""
}

// Containers returns the IDs of the Docker containers, running or not, of
// the allocations of job jobID on the agent's node.
func (a *Agent) Containers(t testing.TB, jobID string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := client.Filters{}.Add("label", "com.hashicorp.nomad.job_id="+jobID, "com.hashicorp.nomad.node_id="+a.NodeID)
	list, err := a.docker.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatalf("nomadtest: containers of job %s: %v", jobID, err)
	}
	var ids []string
	for _, c := range list.Items {
		ids = append(ids, c.ID)
	}
	return ids
}

// alive returns an error with the end of the log once the agent has
// exited.
func (a *Agent) alive() error {
	select {
	case <-a.exited:
		return fmt.Errorf("nomad agent exited: %v\n%s", a.cmd.ProcessState, a.tail())
	default:
		return nil
	}
}

// tail is the end of the agent's log.
func (a *Agent) tail() string {
	lines, _ := testbin.LogTail(a.LogPath, 30)
	return "nomad agent log (" + a.LogPath + "):\n" + strings.Join(lines, "\n")
}

// freePorts returns n loopback ports free at the time of the call.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
