package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/moby/moby/client"
)

// Engine is what Load needs of a Docker Engine; *client.Client has it.
type Engine interface {
	ServerVersion(ctx context.Context, options client.ServerVersionOptions) (client.ServerVersionResult, error)
	ImageInspect(ctx context.Context, image string, options ...client.ImageInspectOption) (client.ImageInspectResult, error)
	ImageLoad(ctx context.Context, input io.Reader, options ...client.ImageLoadOption) (client.ImageLoadResult, error)
	ImageRemove(ctx context.Context, image string, options client.ImageRemoveOptions) (client.ImageRemoveResult, error)
}

// Options say which image Load makes from which binary.
type Options struct {
	// Binary is the path of the landlord binary the image runs (see
	// CheckBinary).
	Binary string
	// Ref is the reference to load the image under; default DefaultRef.
	Ref string
	// Now is the clock, for the image's creation time; nil means time.Now.
	Now func() time.Time
}

// Result says what Load did.
type Result struct {
	// Ref is the image's reference and ID its id on the Engine.
	Ref, ID string
	// Loaded is false when the image was up to date and nothing was done.
	Loaded bool
	// Size is the size of the image's one layer, in bytes.
	Size int64
	// Replaced is the id of the image Ref named before, removed; empty when
	// there was none.
	Replaced string
	// Kept is the id of the image Ref named before, kept because a
	// container uses it (or the Engine would not remove it: KeptBecause).
	Kept, KeptBecause string
}

// ErrLoad means the Engine refused or failed to load the image.
var ErrLoad = errors.New("the engine did not load the image")

// Load makes the demo image from opts.Binary on the Engine under opts.Ref,
// unless the image there was made from the same binary already (see the
// package doc). The binary must suit the Engine (CheckBinary).
func Load(ctx context.Context, e Engine, opts Options) (*Result, error) {
	if opts.Ref == "" {
		opts.Ref = DefaultRef
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if _, err := reference.ParseNormalizedNamed(opts.Ref); err != nil {
		return nil, fmt.Errorf("demo: %q is not an image reference such as %s: %w", opts.Ref, DefaultRef, err)
	}
	v, err := e.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return nil, fmt.Errorf("demo: ask the engine its platform: %w", err)
	}
	if v.Os != "linux" {
		return nil, fmt.Errorf("demo: the engine runs %s containers: %w", v.Os, ErrNotLinux)
	}
	if err := CheckBinary(opts.Binary, v.Arch); err != nil {
		return nil, err
	}
	a, err := newArchive(opts.Binary, opts.Ref, v.Arch, opts.Now())
	if err != nil {
		return nil, err
	}
	res := &Result{Ref: opts.Ref, Size: a.layerSize}
	old, err := e.ImageInspect(ctx, opts.Ref)
	switch {
	case err == nil && old.Config != nil && old.Config.Labels[LabelBinary] == a.label:
		res.ID = old.ID
		return res, nil
	case err != nil && !cerrdefs.IsNotFound(err):
		return nil, fmt.Errorf("demo: inspect %s: %w", opts.Ref, err)
	}
	if err := load(ctx, e, a); err != nil {
		return nil, err
	}
	res.Loaded = true
	now, err := e.ImageInspect(ctx, opts.Ref)
	if err != nil {
		return nil, fmt.Errorf("demo: inspect %s after loading it: %w", opts.Ref, err)
	}
	if now.Config == nil || now.Config.Labels[LabelBinary] != a.label {
		return nil, fmt.Errorf("demo: %w: %s is not the image just loaded", ErrLoad, opts.Ref)
	}
	res.ID = now.ID
	if old.ID != "" && old.ID != now.ID {
		// Untagged now; removed unless a container still uses it.
		if _, err := e.ImageRemove(ctx, old.ID, client.ImageRemoveOptions{PruneChildren: true}); err != nil && !cerrdefs.IsNotFound(err) {
			res.Kept, res.KeptBecause = old.ID, err.Error()
		} else {
			res.Replaced = old.ID
		}
	}
	return res, nil
}

// load streams the archive to the Engine's image load API.
func load(ctx context.Context, e Engine, a *archive) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		err := a.writeTo(pw)
		pw.CloseWithError(err)
		written <- err
	}()
	resp, err := e.ImageLoad(ctx, pr, client.ImageLoadWithQuiet(true))
	if err != nil {
		_ = pr.CloseWithError(err)
		<-written
		return fmt.Errorf("demo: %w: %w", ErrLoad, err)
	}
	defer resp.Close()
	dec := json.NewDecoder(resp)
	var failed error
	for {
		var m struct {
			Error       string `json:"error"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			failed = fmt.Errorf("demo: read the engine's answer: %w", err)
			break
		}
		if m.Error != "" && failed == nil {
			failed = fmt.Errorf("demo: %w: %s", ErrLoad, m.Error)
		}
	}
	_ = pr.Close()
	if err := <-written; err != nil && failed == nil && !errors.Is(err, io.ErrClosedPipe) {
		return err
	}
	return failed
}
