package dockertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// runLabel is the echo image's label naming the run that built it.
const runLabel = "landlord-test.run"

// Main runs m's tests for a package whose resources are named under bases
// (see Prefix): before them it sweeps what ended runs left (Sweep), after
// them it removes what this run left under bases and its echo images, and
// releases its lock. It returns the code for os.Exit:
//
//	func TestMain(m *testing.M) { os.Exit(dockertest.Main(m, "lltest")) }
func Main(m *testing.M, bases ...string) int {
	if cli, err := ping(); err == nil {
		if removed, err := Sweep(context.Background(), cli, bases...); err != nil {
			fmt.Fprintf(os.Stderr, "dockertest: sweep what ended runs left: %v\n", err)
		} else if len(removed) > 0 {
			fmt.Fprintf(os.Stderr, "dockertest: removed %d things ended runs left: %s\n", len(removed), strings.Join(removed, ", "))
		}
		_ = cli.Close()
	}
	code := m.Run()
	End(bases...)
	return code
}

// End removes what this run left on the Engine under bases (containers and
// networks named Prefix(base)…) and its echo images, then releases the
// run's lock. Main calls it; a TestMain that cannot use Main calls it last.
func End(bases ...string) {
	if cli, err := ping(); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		own := RunID()
		_, _ = sweep(ctx, cli, bases, func(id string, _ time.Time) bool { return id == own })
		cancel()
		_ = cli.Close()
	}
	removeEchoImages()
	release()
}

// Sweep removes from the Engine what runs that ended left: the containers
// and networks named <base>-<run id>… of one of bases whose run ended,
// those named <base>-… without a run id once older than StaleAfter, and
// the echo images of ended runs. A run ended when its lock file is free or
// gone; a run of another host (or lock directory) cannot be checked, and
// its resources are swept once older than StaleAfter. Lock files of ended
// runs go last. It returns the names of what it removed.
func Sweep(ctx context.Context, cli *client.Client, bases ...string) ([]string, error) {
	dir, now := os.TempDir(), time.Now()
	removed, err := sweep(ctx, cli, bases, func(id string, created time.Time) bool { return ended(dir, id, created, now) })
	if err != nil {
		return removed, err
	}
	sweepLocks(dir)
	return removed, nil
}

// sweep removes the resources under bases, and the echo images, of the
// runs gone says are over (id "" is a resource of no known run).
func sweep(ctx context.Context, cli *client.Client, bases []string, gone func(id string, created time.Time) bool) ([]string, error) {
	var removed []string
	var errs []error
	for _, base := range bases {
		f := client.Filters{}.Add("name", base+"-")
		cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
		if err != nil {
			errs = append(errs, fmt.Errorf("list containers: %w", err))
		}
		for _, c := range cs.Items {
			if len(c.Names) == 0 || !strings.HasPrefix(strings.TrimPrefix(c.Names[0], "/"), base+"-") ||
				!gone(runOf(c.Names[0], base), time.Unix(c.Created, 0)) {
				continue
			}
			if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("remove container %s: %w", c.Names[0], err))
				continue
			}
			removed = append(removed, "container "+strings.TrimPrefix(c.Names[0], "/"))
		}
		ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
		if err != nil {
			errs = append(errs, fmt.Errorf("list networks: %w", err))
		}
		for _, n := range ns.Items {
			if !strings.HasPrefix(n.Name, base+"-") || !gone(runOf(n.Name, base), n.Created) {
				continue
			}
			if _, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
				continue
			}
			removed = append(removed, "network "+n.Name)
		}
	}
	imgs, err := cli.ImageList(ctx, client.ImageListOptions{Filters: client.Filters{}.Add("label", "landlord-test=echo")})
	if err != nil {
		errs = append(errs, fmt.Errorf("list echo images: %w", err))
	}
	for _, img := range imgs.Items {
		if !gone(img.Labels[runLabel], time.Unix(img.Created, 0)) {
			continue
		}
		if _, err := cli.ImageRemove(ctx, img.ID, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove echo image %s: %w", img.RepoTags, err))
			continue
		}
		removed = append(removed, fmt.Sprintf("image %s", strings.Join(img.RepoTags, " ")))
	}
	return removed, errors.Join(errs...)
}

// sweepLocks removes the lock files of this host's runs that ended.
func sweepLocks(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		id, ok := strings.CutPrefix(e.Name(), lockPrefix)
		if !ok {
			continue
		}
		if id, ok = strings.CutSuffix(id, lockSuffix); ok && validRunID(id) && stateOf(dir, id) == runEnded {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
