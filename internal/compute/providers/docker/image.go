package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Why a pull failed, for callers and tests to branch on with errors.Is.
var (
	// errImageMissing means an image is neither on the Engine nor in its
	// registry (or the policy forbids pulling it, or the registry cannot be
	// reached).
	errImageMissing = errors.New("image is missing")
	// errRegistryDenied means the registry refused to hand the image over.
	errRegistryDenied = errors.New("registry denied access")
	// errRegistryOffline means the Engine could not resolve the registry's
	// name or connect to it for registryGrace: there is no registry to
	// pull from, as on a machine without network or behind a proxy the
	// Engine does not use.
	errRegistryOffline = errors.New("the engine cannot resolve or reach the registry")
	// errRegistryFailed means the registry answered but failed (5xx, a
	// transfer that broke off); a later pull may work.
	errRegistryFailed = errors.New("registry failed")
)

// defaultRegistryGrace is how long pulls are tried again while the Engine
// cannot resolve or reach an image's registry before the failure is
// terminal: long enough to ride out a resolver or a registry restarting,
// short enough that a tenant on an Engine without a registry fails within
// about 20 s instead of backing off for minutes.
const defaultRegistryGrace = 15 * time.Second

// ensureImage makes image available on the Engine according to policy.
func (p *Provider) ensureImage(ctx context.Context, log *slog.Logger, image string, policy PullPolicy) error {
	res, err := p.client.ImageInspect(ctx, image)
	present := err == nil
	if present {
		p.images.put(res.ID, res)
	}
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("inspect image %s: %w", image, err)
	}
	if present && policy != PullAlways {
		return nil
	}
	if policy == PullNever {
		return provider.Terminal(fmt.Errorf("%w: %s is not on the engine and pull_policy is never: load it onto the engine or allow pulls", errImageMissing, image))
	}
	start := p.now()
	for attempt := 1; ; attempt++ {
		log.Info("docker pulling image", slog.String("image", image), slog.Int("attempt", attempt))
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
		case !offline(pullErr):
			return pullFailure(image, pullErr)
		}
		elapsed := p.now().Sub(start)
		if elapsed >= p.registryGrace {
			return registryOffline(image, attempt, elapsed, pullErr)
		}
		wait := min(time.Second<<min(attempt-1, 4), p.registryGrace-elapsed)
		log.Warn("docker pull: the engine cannot reach the registry; trying again", slog.String("image", image),
			slog.Duration("retry_in", wait), slog.String("error", pullErr.Error()))
		provider.ReportProgress(ctx, "the engine cannot resolve or reach the registry %s to pull %s; pulling again in %s (gives up %s after the first pull)",
			registryOf(image), image, wait.Round(100*time.Millisecond), p.registryGrace)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w to pull %s: %w: %w", errRegistryOffline, image, ctx.Err(), pullErr)
		}
	}
}

// pull pulls image, reporting its progress through ctx (see
// provider.WithProgress) at most about once a second. An error the Engine
// reports inside the progress stream is returned.
func (p *Provider) pull(ctx context.Context, image string) error {
	provider.ReportProgress(ctx, "pulling image %s", image)
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
			provider.ReportProgress(ctx, "%s", msg)
		}
	}
	provider.ReportProgress(ctx, "pulled image %s", image)
	return nil
}

// pullFailure classifies a failed pull of an image the Engine does not have,
// when the registry could be reached: terminal when the registry answered
// that the image does not exist or may not be pulled, retryable when it
// failed, since the same pull may work later.
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
		return provider.Terminal(fmt.Errorf("%w: the registry has no repository or tag %s: check the image name and tag, or push the image: %w",
			errImageMissing, image, err))
	case cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err) || code == 401 || code == 403 ||
		// Registries' words, not a local "permission denied" of the Engine.
		containsAny(msg, "access denied", "access to the resource is denied", "unauthorized", "authentication required", "no basic auth credentials"):
		return provider.Terminal(fmt.Errorf("%w: %w to %s: log the engine in to the registry (docker login on the engine's host) or make the repository public: %w",
			errImageMissing, errRegistryDenied, image, err))
	case cerrdefs.IsInvalidArgument(err):
		return provider.Terminal(fmt.Errorf("%w: the engine refused to pull %s: %w", errImageMissing, image, err))
	default:
		// Retryable: the controller decides whether and when to pull again,
		// and says so; the cause does not.
		return provider.Retryable(fmt.Errorf("%w to hand over %s, which is not on the engine: %w",
			errRegistryFailed, image, err))
	}
}

// offline reports whether a pull failed because the Engine could not
// resolve the registry's name or open a connection to it, as opposed to a
// registry that answered and failed. Only the Engine's words tell: it
// reports either as a 500 with the Go net error's text.
func offline(err error) bool {
	msg := strings.ToLower(err.Error())
	return containsAny(msg,
		"no such host",                         // NXDOMAIN (Go resolver)
		"server misbehaving",                   // SERVFAIL (Go resolver)
		"temporary failure in name resolution", // getaddrinfo EAI_AGAIN (cgo resolver)
		"name or service not known",            // getaddrinfo EAI_NONAME (cgo resolver)
		"connection refused",
		"network is unreachable",
		"no route to host",
		"proxyconnect tcp", // the Engine's HTTP(S)_PROXY cannot be reached
	) || (strings.Contains(msg, "dial tcp") && containsAny(msg, "i/o timeout", "timeout"))
}

// registryOffline is the terminal error of a pull whose registry the
// Engine could not resolve or reach for the whole grace: it says so and
// what to do.
func registryOffline(image string, attempts int, elapsed time.Duration, err error) error {
	return provider.Terminal(fmt.Errorf("%w: %s is not on the engine, and %w %s (%d pulls over %s): "+
		"put the image on the engine (docker pull, or docker save where a registry is reachable and docker load here) and use pull_policy: never or if-not-present, "+
		"or give the engine a registry mirror or proxy it can reach (registry-mirrors, proxies in its daemon.json): %w",
		errImageMissing, image, errRegistryOffline, registryOf(image), attempts, elapsed.Round(time.Second), err))
}

// registryOf is the registry host of an image reference: "docker.io" for
// Docker Hub images such as nginx:1.27-alpine.
func registryOf(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "of " + image
	}
	return reference.Domain(named)
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
