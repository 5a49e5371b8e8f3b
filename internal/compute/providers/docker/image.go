package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute"
)

// Why a pull failed, for callers and tests to branch on with errors.Is.
var (
	// errImageMissing means an image is neither on the Engine nor in its
	// registry (or the policy forbids pulling it).
	errImageMissing = errors.New("image is missing")
	// errRegistryDenied means the registry refused to hand the image over.
	errRegistryDenied = errors.New("registry denied access")
	// errRegistryUnreachable means the registry could not be reached or
	// failed (refused connection, timeout, 5xx); a later pull may work.
	errRegistryUnreachable = errors.New("registry could not be reached")
)

// ensureImage makes image available on the Engine according to policy.
func (p *Provider) ensureImage(ctx context.Context, log *slog.Logger, image string, policy PullPolicy) error {
	_, err := p.client.ImageInspect(ctx, image)
	present := err == nil
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("inspect image %s: %w", image, err)
	}
	if present && policy != PullAlways {
		return nil
	}
	if policy == PullNever {
		return compute.Terminal(fmt.Errorf("%w: %s is not on the engine and pull_policy is never: load it onto the engine or allow pulls", errImageMissing, image))
	}
	log.Info("docker pulling image", slog.String("image", image))
	pullErr := p.pull(ctx, image)
	switch {
	case pullErr == nil:
		log.Info("docker pulled image", slog.String("image", image))
		return nil
	case ctx.Err() != nil:
		return pullErr
	case present:
		log.Warn("docker pull failed; using the local image", slog.String("image", image), slog.String("error", pullErr.Error()))
		return nil
	default:
		return pullFailure(image, pullErr)
	}
}

// pull pulls image, reporting its progress through ctx (see
// compute.WithProgress) at most about once a second. An error the Engine
// reports inside the progress stream is returned.
func (p *Provider) pull(ctx context.Context, image string) error {
	compute.ReportProgress(ctx, "pulling image %s", image)
	resp, err := p.client.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer resp.Close()
	progress := newPullProgress(image, p.now())
	for m, err := range resp.JSONMessages(ctx) {
		if err != nil {
			return err
		}
		if m.Error != nil {
			return m.Error
		}
		if msg, ok := progress.observe(m, p.now()); ok {
			compute.ReportProgress(ctx, "%s", msg)
		}
	}
	compute.ReportProgress(ctx, "pulled image %s", image)
	return nil
}

// pullFailure classifies a failed pull of an image the Engine does not have:
// terminal when the registry answered that the image does not exist or may
// not be pulled, retryable when it could not be reached or failed, since the
// same pull may work later.
func pullFailure(image string, err error) error {
	msg := strings.ToLower(err.Error())
	var streamErr *jsonstream.Error
	code := 0
	if errors.As(err, &streamErr) {
		code = streamErr.Code
	}
	switch {
	case cerrdefs.IsNotFound(err) || code == 404 ||
		containsAny(msg, "manifest unknown", "name unknown", "not found", "does not exist"):
		return compute.Terminal(fmt.Errorf("%w: the registry has no repository or tag %s: check the image name and tag, or push the image: %w",
			errImageMissing, image, err))
	case cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err) || code == 401 || code == 403 ||
		// Registries' words, not a local "permission denied" of the Engine.
		containsAny(msg, "access denied", "access to the resource is denied", "unauthorized", "authentication required", "no basic auth credentials"):
		return compute.Terminal(fmt.Errorf("%w: %w to %s: log the engine in to the registry (docker login on the engine's host) or make the repository public: %w",
			errImageMissing, errRegistryDenied, image, err))
	case cerrdefs.IsInvalidArgument(err):
		return compute.Terminal(fmt.Errorf("%w: the engine refused to pull %s: %w", errImageMissing, image, err))
	default:
		return compute.Retryable(fmt.Errorf("%w to pull %s, which is not on the engine; will try again: %w",
			errRegistryUnreachable, image, err))
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
