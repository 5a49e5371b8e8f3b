package docker

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute"
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
		return compute.Terminal(fmt.Errorf("%w: %s is not on the engine and pull_policy is never", errImageMissing, image))
	}
	log.Info("docker pulling image", slog.String("image", image))
	pullErr := p.pull(ctx, image)
	switch {
	case pullErr == nil:
		return nil
	case ctx.Err() != nil:
		return pullErr
	case present:
		log.Warn("docker pull failed; using the local image", slog.String("image", image), slog.String("error", pullErr.Error()))
		return nil
	default:
		return compute.Terminal(fmt.Errorf("%w: %s is not on the engine and cannot be pulled: %w", errImageMissing, image, pullErr))
	}
}

func (p *Provider) pull(ctx context.Context, image string) error {
	resp, err := p.client.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer resp.Close()
	return resp.Wait(ctx)
}
