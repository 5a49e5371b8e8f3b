package ecs

import (
	"context"
	"slices"
	"sync"
)

// batcher coalesces the lookups of concurrent callers into calls that each
// name up to max keys, as ECS's describe calls take: DescribeServices up to
// 10 services, DescribeTasks up to 100 tasks, of one cluster. A lookup is
// never answered by a call sent before it was asked, so each answer is as
// live as a call of its own.
//
// It sends a call at once when nothing is in flight, so a lone caller waits
// no longer than for a call of its own; while calls are in flight, keys
// gather until max of them are pending, or until every call in flight has
// come back (group commit). A call's failure goes to every lookup in it. A
// caller whose context ends stops waiting; the call goes on for the others,
// and is cancelled only when no one waits for it.
type batcher[T any] struct {
	max int
	// call asks ECS about keys (at most max, no duplicates); a key absent
	// from the result exists nowhere.
	call func(ctx context.Context, keys []string) (map[string]T, error)

	mu       sync.Mutex
	pending  map[string][]*lookup[T] // keys not yet sent → who waits for them
	order    []string                // pending keys, first asked first
	inflight int
}

// lookup is one caller's wait for its keys.
type lookup[T any] struct {
	keys  []string
	want  int // keys not yet answered
	found map[string]T
	err   error
	done  chan struct{} // closed when answered
	over  bool          // answered, or its caller left
	sent  []*batch[T]   // the calls carrying its keys
}

// batch is one call and the lookups waiting for it.
type batch[T any] struct {
	keys    []string
	waiters map[string][]*lookup[T]
	waiting int // lookups still waiting for it
	ctx     context.Context
	cancel  context.CancelFunc
}

func newBatcher[T any](max int, call func(context.Context, []string) (map[string]T, error)) *batcher[T] {
	return &batcher[T]{max: max, call: call, pending: map[string][]*lookup[T]{}}
}

// get returns what ECS says of each key now; a key absent from the result
// exists nowhere. The error is the call's (ctx's when ctx ends first).
func (b *batcher[T]) get(ctx context.Context, keys []string) (map[string]T, error) {
	l := &lookup[T]{found: make(map[string]T, len(keys)), done: make(chan struct{})}
	b.mu.Lock()
	for _, k := range keys {
		if slices.Contains(l.keys, k) {
			continue
		}
		l.keys = append(l.keys, k)
		if _, ok := b.pending[k]; !ok {
			b.order = append(b.order, k)
		}
		b.pending[k] = append(b.pending[k], l)
	}
	l.want = len(l.keys)
	if l.want == 0 {
		b.mu.Unlock()
		return l.found, nil
	}
	send := b.ready(ctx)
	b.mu.Unlock()
	for _, bt := range send {
		go b.send(bt)
	}
	select {
	case <-l.done:
		return l.found, l.err
	case <-ctx.Done():
		b.leave(l)
		return nil, ctx.Err()
	}
}

// ready takes the pending keys that are to be sent now: every full call,
// and the rest when nothing was in flight. ctx gives the calls their values
// (not its cancellation). The caller holds b.mu.
func (b *batcher[T]) ready(ctx context.Context) []*batch[T] {
	idle := b.inflight == 0
	var out []*batch[T]
	for len(b.order) >= b.max || (idle && len(b.order) > 0) {
		n := min(b.max, len(b.order))
		bt := &batch[T]{keys: slices.Clone(b.order[:n]), waiters: make(map[string][]*lookup[T], n)}
		b.order = slices.Delete(b.order, 0, n)
		for _, k := range bt.keys {
			bt.waiters[k] = b.pending[k]
			delete(b.pending, k)
			for _, l := range bt.waiters[k] {
				if !slices.Contains(l.sent, bt) {
					l.sent = append(l.sent, bt)
					bt.waiting++
				}
			}
		}
		bt.ctx, bt.cancel = context.WithCancel(context.WithoutCancel(ctx))
		b.inflight++
		out = append(out, bt)
	}
	return out
}

// send makes bt's call, answers its lookups and sends what gathered
// meanwhile.
func (b *batcher[T]) send(bt *batch[T]) {
	found, err := b.call(bt.ctx, bt.keys)
	bt.cancel()
	b.mu.Lock()
	b.inflight--
	for k, ls := range bt.waiters {
		for _, l := range ls {
			if l.over {
				continue
			}
			if err != nil {
				l.err = err
				b.finish(l)
				continue
			}
			if v, ok := found[k]; ok {
				l.found[k] = v
			}
			if l.want--; l.want == 0 {
				b.finish(l)
			}
		}
	}
	next := b.ready(bt.ctx)
	b.mu.Unlock()
	for _, nb := range next {
		go b.send(nb)
	}
}

// leave withdraws a lookup whose caller stopped waiting: its keys no one
// else asked for are not sent, and a call no one waits for any more is
// cancelled.
func (b *batcher[T]) leave(l *lookup[T]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.over {
		return
	}
	b.release(l)
	for _, k := range l.keys {
		ls, ok := b.pending[k]
		if !ok {
			continue
		}
		if ls = slices.DeleteFunc(ls, func(o *lookup[T]) bool { return o == l }); len(ls) > 0 {
			b.pending[k] = ls
			continue
		}
		delete(b.pending, k)
		b.order = slices.DeleteFunc(b.order, func(o string) bool { return o == k })
	}
}

// finish answers a lookup. The caller holds b.mu.
func (b *batcher[T]) finish(l *lookup[T]) {
	b.release(l)
	close(l.done)
}

// release marks a lookup over and cancels each call of its that no one
// waits for any more (a call that came back is cancelled already). The
// caller holds b.mu.
func (b *batcher[T]) release(l *lookup[T]) {
	l.over = true
	for _, bt := range l.sent {
		if bt.waiting--; bt.waiting == 0 {
			bt.cancel()
		}
	}
}
