package docker

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// imageDefaults are what an image's configuration gives a container created
// from it that does not set them (moby daemon/commit.go merge).
type imageDefaults struct {
	entrypoint []string
	cmd        []string
	env        []string
	health     *container.HealthConfig
}

// maxImageDefaults bounds the cache of image configurations.
const maxImageDefaults = 256

// imageCache keeps the configurations of images by id. An image id is the
// digest of its configuration, so an entry never goes stale; the cache only
// saves an ImageInspect per container per Inspect, and holds nothing a
// restarted provider needs.
type imageCache struct {
	mu   sync.Mutex
	byID map[string]imageDefaults
}

// imageDefaults returns the defaults of the image with id. An image the
// Engine no longer has (removed by force while a container uses it) gives
// none: the container's own configuration is then compared with the spec
// alone.
func (p *Provider) imageDefaults(ctx context.Context, id string) (imageDefaults, error) {
	p.images.mu.Lock()
	d, ok := p.images.byID[id]
	p.images.mu.Unlock()
	if ok {
		return d, nil
	}
	res, err := p.client.ImageInspect(ctx, id)
	switch {
	case isNotFound(err):
		return imageDefaults{}, nil
	case err != nil:
		return imageDefaults{}, fmt.Errorf("inspect image %s: %w", id, err)
	}
	return p.images.put(id, res), nil
}

// put records the defaults of the image inspected as res under id (the
// image's id, or the reference it was inspected by), and returns them.
func (c *imageCache) put(id string, res client.ImageInspectResult) imageDefaults {
	var d imageDefaults
	if cfg := res.Config; cfg != nil {
		d = imageDefaults{entrypoint: slices.Clone(cfg.Entrypoint), cmd: slices.Clone(cfg.Cmd), env: slices.Clone(cfg.Env)}
		if cfg.Healthcheck != nil {
			hc := *cfg.Healthcheck
			d.health = &hc
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil || len(c.byID) >= maxImageDefaults {
		c.byID = map[string]imageDefaults{}
	}
	c.byID[id] = d
	return d
}
