package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"
)

// Backoff between attempts to open the Engine's event stream.
const (
	watchMinBackoff = 500 * time.Millisecond
	watchMaxBackoff = 30 * time.Second
)

// containerActions are the container events that change what Inspect
// compares or GetStatus reports; exec_* (a command health check runs one
// per interval), attach, resize and the like are left out. health_status
// matches "health_status: healthy" and the other statuses (the Engine's
// event filter matches it by prefix), and the Engine logs it on a change
// of status only.
var containerActions = []events.Action{
	events.ActionCreate, events.ActionStart, events.ActionDie, events.ActionDestroy, events.ActionRename,
	events.ActionPause, events.ActionUnPause, events.ActionUpdate, events.ActionOOM, events.ActionHealthStatus,
}

// networkActions are the network events that change a tenant's network or
// a container's attachment to one.
var networkActions = []events.Action{events.ActionCreate, events.ActionConnect, events.ActionDisconnect, events.ActionDestroy}

// WatchChanges tells changed of every change to a container landlord
// manages or to its network attachments, read from the Engine's events
// API, until ctx ends; then it returns nil. Container events carry the
// container's labels, so they name the tenant. Network events carry no
// labels: a connect or disconnect names the container, whose tenant comes
// from the containers seen so far or from inspecting it, and a removed
// network is matched to its tenant by id from the networks listed when the
// stream opened or created since. When a stream ends it is opened again
// with backoff, from the time of the last event it delivered, so that
// nothing in between is lost while the Engine still holds it.
func (p *Provider) WatchChanges(ctx context.Context, changed func(tenantID string)) error {
	w := &watcher{p: p, changed: changed, log: p.logger.With(slog.String("watch", "events"))}
	w.reset()
	label := p.naming("", "").label(labelManagedBy) + "=" + managedBy
	var wg sync.WaitGroup
	wg.Go(func() {
		w.stream(ctx, "container", filter("container", containerActions).Add("label", label), nil, w.container)
	})
	wg.Go(func() {
		w.stream(ctx, "network", filter("network", networkActions), w.rebuild, w.network)
	})
	wg.Wait()
	return nil
}

func filter(typ string, actions []events.Action) client.Filters {
	f := client.Filters{}.Add("type", typ)
	for _, a := range actions {
		f = f.Add("event", string(a))
	}
	return f
}

// stream reads one event stream, opening it again with backoff whenever it
// ends, until ctx ends; prepare, if set, runs before each opening.
func (w *watcher) stream(ctx context.Context, what string, f client.Filters, prepare func(context.Context) error, handle func(context.Context, events.Message)) {
	var since int64 // the last event's time, in ns since the epoch
	backoff := watchMinBackoff
	for ctx.Err() == nil {
		if prepare != nil {
			if err := prepare(ctx); err != nil && ctx.Err() == nil {
				w.log.Warn("docker could not list containers and networks for the event watch; it maps events by inspection meanwhile", slog.String("error", err.Error()))
			}
		}
		opts := client.EventsListOptions{Filters: f}
		if since != 0 {
			opts.Since = fmt.Sprintf("%d.%09d", since/1e9, since%1e9)
		}
		res := w.p.client.Events(ctx, opts)
		err := w.read(ctx, res, handle, &since, &backoff)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, io.EOF) {
			err = errors.New("the Engine closed the stream")
		}
		w.log.Warn("docker event stream ended; opening it again", slog.String("stream", what), slog.Duration("backoff", backoff), slog.String("error", fmt.Sprint(err)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, watchMaxBackoff)
	}
}

// read handles the events of one stream until it ends, and returns why.
func (w *watcher) read(ctx context.Context, res client.EventsResult, handle func(context.Context, events.Message), since *int64, backoff *time.Duration) error {
	for {
		select {
		case m := <-res.Messages:
			*backoff = watchMinBackoff
			if m.TimeNano > *since {
				*since = m.TimeNano
			}
			handle(ctx, m)
		case err := <-res.Err:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// watcher maps events to tenants. Its maps are hints rebuilt from the
// Engine whenever a stream opens: an event it cannot map is missed, and the
// controller's resync finds the change instead.
type watcher struct {
	p       *Provider
	changed func(tenantID string)
	log     *slog.Logger

	mu sync.Mutex
	// containers maps container ids to tenant ids, "" for a container that
	// is not landlord's.
	containers map[string]string
	// networks maps the ids of tenants' own networks to tenant ids.
	networks map[string]string
}

// maxWatched bounds each map; past it, it starts again empty.
const maxWatched = 10_000

func (w *watcher) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.containers, w.networks = map[string]string{}, map[string]string{}
}

// rebuild lists landlord's containers and networks by label.
func (w *watcher) rebuild(ctx context.Context) error {
	n := w.p.naming("", "")
	f := client.Filters{}.Add("label", n.label(labelManagedBy)+"="+managedBy)
	cs, err := w.p.client.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	ns, err := w.p.client.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return fmt.Errorf("list networks: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range cs.Items {
		if id := c.Labels[n.label(labelTenantID)]; id != "" {
			remember(w.containers, c.ID, id)
		}
	}
	for _, nw := range ns.Items {
		if id := nw.Labels[n.label(labelTenantID)]; id != "" {
			remember(w.networks, nw.ID, id)
		}
	}
	return nil
}

func remember(m map[string]string, key, value string) {
	if len(m) >= maxWatched {
		clear(m)
	}
	m[key] = value
}

// container handles a container event, whose attributes are the
// container's labels.
func (w *watcher) container(_ context.Context, m events.Message) {
	id := m.Actor.Attributes[w.p.naming("", "").label(labelTenantID)]
	if id == "" {
		return
	}
	w.mu.Lock()
	if m.Action == events.ActionDestroy {
		delete(w.containers, m.Actor.ID)
	} else {
		remember(w.containers, m.Actor.ID, id)
	}
	w.mu.Unlock()
	w.changed(id)
}

// network handles a network event: a container connected or disconnected
// (its id in the "container" attribute), a network created or removed.
func (w *watcher) network(ctx context.Context, m events.Message) {
	switch m.Action {
	case events.ActionConnect, events.ActionDisconnect:
		if id := w.containerTenant(ctx, m.Actor.Attributes["container"]); id != "" {
			w.changed(id)
		}
	case events.ActionCreate:
		if id := w.networkTenant(ctx, m.Actor.ID); id != "" {
			w.changed(id)
		}
	case events.ActionDestroy:
		w.mu.Lock()
		id := w.networks[m.Actor.ID]
		delete(w.networks, m.Actor.ID)
		w.mu.Unlock()
		if id != "" {
			w.changed(id)
		}
	}
}

// containerTenant is the tenant of a container, from the map or else from
// its labels; "" when it is not landlord's or is gone.
func (w *watcher) containerTenant(ctx context.Context, containerID string) string {
	if containerID == "" {
		return ""
	}
	w.mu.Lock()
	id, known := w.containers[containerID]
	w.mu.Unlock()
	if known {
		return id
	}
	res, err := w.p.client.ContainerInspect(ctx, containerID, client.ContainerInspectOptions{})
	if err != nil {
		return "" // removed: its destroy event names its tenant
	}
	n := w.p.naming("", "")
	if res.Container.Config != nil && res.Container.Config.Labels[n.label(labelManagedBy)] == managedBy {
		id = res.Container.Config.Labels[n.label(labelTenantID)]
	}
	w.mu.Lock()
	remember(w.containers, containerID, id)
	w.mu.Unlock()
	return id
}

// networkTenant is the tenant whose own network networkID is, from its
// labels; "" for any other network.
func (w *watcher) networkTenant(ctx context.Context, networkID string) string {
	res, err := w.p.client.NetworkInspect(ctx, networkID, client.NetworkInspectOptions{})
	if err != nil {
		return ""
	}
	n := w.p.naming("", "")
	if res.Network.Labels[n.label(labelManagedBy)] != managedBy {
		return ""
	}
	id := res.Network.Labels[n.label(labelTenantID)]
	if id != "" {
		w.mu.Lock()
		remember(w.networks, networkID, id)
		w.mu.Unlock()
	}
	return id
}
