package nomadtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/moby/moby/client"
)

// Labels the agent's docker driver sets on its containers.
const (
	labelAllocID = "com.hashicorp.nomad.alloc_id"
	labelNodeID  = "com.hashicorp.nomad.node_id"
)

// stop stops the agent and removes what it leaves behind: it sends SIGINT,
// on which a -dev agent stops its allocations and removes their
// containers, and kills the process group after stopTimeout; then, always,
// it kills what is left of the group (the logmon and docker_logger plugins
// outlive a killed agent), removes the agent's containers, unmounts the
// tasks' tmpfs mounts and removes the directory.
func (a *Agent) stop() error {
	var errs []error
	if a.cmd != nil && a.cmd.Process != nil {
		select {
		case <-a.exited:
		default:
			_ = a.cmd.Process.Signal(os.Interrupt)
			select {
			case <-a.exited:
			case <-time.After(stopTimeout):
				fmt.Fprintf(os.Stderr, "nomadtest: the agent did not stop within %s of SIGINT; killing it\n", stopTimeout)
			}
		}
		errs = append(errs, killGroup(a.cmd.Process.Pid))
		<-a.exited
	}
	if a.docker != nil {
		errs = append(errs, a.removeContainers())
		_ = a.docker.Close()
	}
	if err := unmountUnder(a.dataDir); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, os.RemoveAll(a.dir))
	}
	return errors.Join(errs...)
}

// removeContainers removes every container of the agent: labelled with its
// node's ID, or with the ID of an allocation in its data directory.
func (a *Agent) removeContainers() error {
	allocs := map[string]bool{}
	if dirs, err := os.ReadDir(filepath.Join(a.dataDir, "alloc")); err == nil {
		for _, d := range dirs {
			allocs[d.Name()] = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := a.docker.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", labelAllocID)})
	if err != nil {
		return fmt.Errorf("list the agent's containers: %w", err)
	}
	var errs []error
	removed := 0
	for _, c := range list.Items {
		if (a.NodeID == "" || c.Labels[labelNodeID] != a.NodeID) && !allocs[c.Labels[labelAllocID]] {
			continue
		}
		if _, err := a.docker.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, fmt.Errorf("remove container %s: %w", c.ID, err))
			continue
		}
		removed++
	}
	if removed > 0 {
		fmt.Fprintf(os.Stderr, "nomadtest: removed %d containers the agent left\n", removed)
	}
	return errors.Join(errs...)
}

// killGroup kills process group pgid and waits until none of its
// processes lives, so that none still writes into the directory stop
// removes.
func killGroup(pgid int) error {
	// The negative pid is the process group.
	if err := syscall.Kill(-pgid, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) {
		return nil
	} else if err != nil {
		return fmt.Errorf("kill the agent's process group %d: %w", pgid, err)
	}
	deadline := time.Now().Add(stopTimeout)
	for {
		alive, err := groupAlive(pgid)
		if err != nil || !alive {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of the agent's group %d remain %s after SIGKILL", pgid, stopTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
