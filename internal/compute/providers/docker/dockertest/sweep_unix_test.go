//go:build unix

package dockertest

import (
	"context"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// A sweep removes what a run that ended left (its lock file is free, as a
// crashed test binary leaves it) and that run's lock file, and keeps what
// runs that still run own, what runs of another host own, what no run
// owns while it is young, and this run's own; End's removal takes this
// run's own only.
func TestSweep(t *testing.T) {
	cli := Engine(t)
	image := EchoImage(t)[0]
	ctx := context.Background()
	dir := os.TempDir()
	// A base of this run's own, so that no other run's resources are in play.
	base := Prefix("llsweep")
	fakeRun := func() string { return hostTag(dir) + randomSuffix() }

	ended := fakeRun()
	writeLock(t, dir, ended, false)
	live := fakeRun()
	writeLock(t, dir, live, true)
	other := otherHostTag(dir) + randomSuffix()
	runs := map[string]string{"ended": ended, "live": live, "other host": other, "this run": RunID()}

	made := map[string]string{} // name → what it stands for
	for what, id := range runs {
		made[base+"-"+id+"-app"] = what
	}
	made[base+"-legacy-app"] = "no run"
	for name := range made {
		mustContainer(t, cli, image, name)
		mustNetwork(t, cli, name)
	}

	removed, err := Sweep(ctx, cli, base)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	var ours []string
	for _, r := range removed {
		if strings.Contains(r, base) {
			ours = append(ours, r)
		}
	}
	slices.Sort(ours)
	name := base + "-" + ended + "-app"
	if want := []string{"container " + name, "network " + name}; !slices.Equal(ours, want) {
		t.Errorf("Sweep removed %q, want %q", ours, want)
	}
	for n, what := range made {
		wantGone := what == "ended"
		if gone := !containerExists(t, cli, n); gone != wantGone {
			t.Errorf("container of %s (%s): removed %v, want %v", what, n, gone, wantGone)
		}
		if gone := !networkExists(t, cli, n); gone != wantGone {
			t.Errorf("network of %s (%s): removed %v, want %v", what, n, gone, wantGone)
		}
	}
	if _, err := os.Stat(lockPath(dir, ended)); !os.IsNotExist(err) {
		t.Errorf("the ended run's lock file is still there (%v)", err)
	}
	if _, err := os.Stat(lockPath(dir, live)); err != nil {
		t.Errorf("the live run's lock file: %v", err)
	}

	own := RunID()
	if _, err := sweep(ctx, cli, []string{base}, func(id string, _ time.Time) bool { return id == own }); err != nil {
		t.Fatal(err)
	}
	for n, what := range made {
		wantGone := what == "ended" || what == "this run"
		if gone := !containerExists(t, cli, n); gone != wantGone {
			t.Errorf("after removing this run's: container of %s: removed %v, want %v", what, gone, wantGone)
		}
	}
}

// writeLock leaves run id's lock file in dir, locked by a descriptor of its
// own (as another process holds it) when locked.
func writeLock(t *testing.T, dir, id string, locked bool) {
	t.Helper()
	f, err := os.OpenFile(lockPath(dir, id), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.Close()
		_ = os.Remove(lockPath(dir, id))
	})
	if locked {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
	}
}

// otherHostTag is a host tag other than this host's.
func otherHostTag(dir string) string {
	for {
		if tag := randomSuffix()[:hostTagLen]; tag != hostTag(dir) {
			return tag
		}
	}
}

func mustContainer(t *testing.T, cli *client.Client, image, name string) {
	t.Helper()
	if _, err := cli.ContainerCreate(context.Background(), client.ContainerCreateOptions{Name: name, Config: &container.Config{Image: image}}); err != nil {
		t.Fatalf("create container %s: %v", name, err)
	}
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.Background(), name, client.ContainerRemoveOptions{Force: true})
	})
}

func mustNetwork(t *testing.T, cli *client.Client, name string) {
	t.Helper()
	res, err := cli.NetworkCreate(context.Background(), name, client.NetworkCreateOptions{})
	if err != nil {
		t.Fatalf("create network %s: %v", name, err)
	}
	t.Cleanup(func() { _, _ = cli.NetworkRemove(context.Background(), res.ID, client.NetworkRemoveOptions{}) })
}

func containerExists(t *testing.T, cli *client.Client, name string) bool {
	t.Helper()
	_, err := cli.ContainerInspect(context.Background(), name, client.ContainerInspectOptions{})
	if err != nil && !cerrdefs.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func networkExists(t *testing.T, cli *client.Client, name string) bool {
	t.Helper()
	_, err := cli.NetworkInspect(context.Background(), name, client.NetworkInspectOptions{})
	if err != nil && !cerrdefs.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}
