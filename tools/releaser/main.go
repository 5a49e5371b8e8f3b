// Command release builds landlord's release artifacts from the commit
// checked out, with nothing but Go and Git (no make, no Docker, no
// network beyond the module proxy for a cold module cache):
//
//	go run ./tools/releaser --version v1.2.3 [--out dist] [--platforms linux/amd64,…]
//
// It writes, into --out: a directory and a .tar.gz per platform (the
// binary, LICENSE, README.md), a CycloneDX SBOM per binary, the image as
// an OCI layout (landlord_VERSION_image/) and as a `docker load` archive
// per architecture, and SHA256SUMS. A work tree with uncommitted changes
// is refused unless --allow-dirty: a release is one commit's. See
// docs/operations.md for publishing them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/release"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		version    = flag.String("version", "", "the release's version, v1.2.3 (required)")
		out        = flag.String("out", "dist", "the directory to write to (emptied first)")
		platforms  = flag.String("platforms", strings.Join(release.Platforms, ","), "GOOS/GOARCH pairs to build, comma-separated; the image needs linux/amd64 and linux/arm64")
		image      = flag.String("image", "", "the reference the image is tagged with (default landlord:VERSION)")
		allowDirty = flag.Bool("allow-dirty", false, "build from a work tree with uncommitted changes")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	root, err := git(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	if status, err := git(ctx, "status", "--porcelain"); err != nil {
		return err
	} else if status != "" && !*allowDirty {
		return fmt.Errorf("the work tree has uncommitted changes; commit them, or pass --allow-dirty for a build that is not a release:\n%s", status)
	}
	commit, err := git(ctx, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	unix, err := git(ctx, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return err
	}
	var secs int64
	if _, err := fmt.Sscan(unix, &secs); err != nil {
		return fmt.Errorf("the commit's time %q: %w", unix, err)
	}
	dir, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	start := time.Now()
	a, err := release.Release(ctx, release.Options{
		Meta:      release.Meta{Version: *version, Commit: commit, Date: time.Unix(secs, 0).UTC()},
		Source:    root,
		Out:       dir,
		Platforms: strings.Split(*platforms, ","),
		Image:     *image,
	})
	if err != nil {
		return err
	}
	fmt.Printf("landlord %s (commit %.12s) in %s, %.0f s\n", *version, commit, dir, time.Since(start).Seconds())
	for _, n := range append(append(append([]string{}, a.Archives...), a.SBOMs...), a.Docker...) {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Printf("  %-52s %8.1f MiB\n", n, float64(st.Size())/(1<<20))
	}
	if a.Layout != "" {
		fmt.Printf("  %-52s %s\n", a.Layout+"/", a.ImageDigest)
	}
	fmt.Printf("  %s\n", a.Sums)
	return nil
}

// git runs git in the current directory and returns its trimmed output.
func git(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
