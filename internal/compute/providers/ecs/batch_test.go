package ecs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/poll"
)

// callRecorder is a batcher's call: it records the keys of each call
// (sorted), answers every key but "none" with its own name, and holds each
// call until the test lets it go when hold is set.
type callRecorder struct {
	mu    sync.Mutex
	calls [][]string
	ctxs  []context.Context
	sent  chan struct{} // one value per call made
	hold  chan struct{} // nil: answer at once
	err   error
}

func newCallRecorder() *callRecorder { return &callRecorder{sent: make(chan struct{}, 100)} }

func (r *callRecorder) call(ctx context.Context, keys []string) (map[string]string, error) {
	r.mu.Lock()
	r.calls = append(r.calls, slices.Sorted(slices.Values(keys)))
	r.ctxs = append(r.ctxs, ctx)
	hold := r.hold
	r.mu.Unlock()
	r.sent <- struct{}{}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range keys {
		if k != "none" {
			out[k] = "value of " + k
		}
	}
	return out, nil
}

func (r *callRecorder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, c := range r.calls {
		out = append(out, len(c))
	}
	return out
}

// waitSent waits for the callRecorder's nth call since the last wait.
func (r *callRecorder) waitSent(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-r.sent:
		case <-time.After(30 * time.Second):
			t.Fatalf("calls made: %v; want %d more", r.sizes(), n)
		}
	}
}

// pendingKeys is how many keys wait to be sent.
func pendingKeys[T any](b *batcher[T]) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.order)
}

// waitPending waits until n keys wait to be sent.
func waitPending[T any](t *testing.T, b *batcher[T], n int) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("%d keys pending", n), 30*time.Second, func() (bool, string) {
		pending := pendingKeys(b)
		return pending == n, fmt.Sprintf("%d keys pending", pending)
	})
}

type answer struct {
	key   string
	found map[string]string
	err   error
}

// ask looks keys up in the background; the answer arrives on the channel.
func ask(ctx context.Context, b *batcher[string], out chan<- answer, keys ...string) {
	go func() {
		found, err := b.get(ctx, keys)
		out <- answer{key: keys[0], found: found, err: err}
	}()
}

func TestBatcherSendsALoneLookupAtOnce(t *testing.T) {
	r := newCallRecorder()
	b := newBatcher(10, r.call)
	got, err := b.get(context.Background(), []string{"a"})
	if err != nil || got["a"] != "value of a" {
		t.Fatalf("get = %v, %v", got, err)
	}
	got, err = b.get(context.Background(), []string{"none", "none"})
	if err != nil || len(got) != 0 {
		t.Fatalf("get of a key that exists nowhere = %v, %v; want nothing", got, err)
	}
	if want := [][]string{{"a"}, {"none"}}; !slices.EqualFunc(r.calls, want, slices.Equal) {
		t.Errorf("calls %v, want %v", r.calls, want)
	}
}

// While a call is in flight, lookups gather: full calls go at once, the
// rest when what is in flight comes back; each caller gets its own keys.
func TestBatcherCoalesces(t *testing.T) {
	r := newCallRecorder()
	r.hold = make(chan struct{})
	b := newBatcher(10, r.call)
	answers := make(chan answer, 30)
	ask(context.Background(), b, answers, "k00")
	r.waitSent(t, 1)
	for i := 1; i < 26; i++ {
		ask(context.Background(), b, answers, fmt.Sprintf("k%02d", i))
	}
	r.waitSent(t, 2) // two full calls of 10, sent while the first is in flight
	waitPending(t, b, 5)
	close(r.hold)
	r.waitSent(t, 1) // the five left, once all three are back
	for range 26 {
		a := <-answers
		if a.err != nil || len(a.found) != 1 || a.found[a.key] != "value of "+a.key {
			t.Errorf("lookup of %s = %v, %v; want its own value alone", a.key, a.found, a.err)
		}
	}
	if got, want := r.sizes(), []int{1, 10, 10, 5}; !slices.Equal(got, want) {
		t.Errorf("call sizes %v, want %v", got, want)
	}
}

// A lookup of more keys than a call takes is split, and the parts go
// together when nothing is in flight; the same key asked twice is sent
// once.
func TestBatcherSplitsALargeLookup(t *testing.T) {
	r := newCallRecorder()
	b := newBatcher(100, r.call)
	var keys []string
	for i := range 150 {
		keys = append(keys, fmt.Sprint("task-", i), fmt.Sprint("task-", i))
	}
	got, err := b.get(context.Background(), keys)
	if err != nil || len(got) != 150 {
		t.Fatalf("get of 150 keys: %d answers, %v", len(got), err)
	}
	if sizes := r.sizes(); !slices.Equal(slices.Sorted(slices.Values(sizes)), []int{50, 100}) {
		t.Errorf("call sizes %v, want 100 and 50", sizes)
	}
}

// A failed call fails every lookup waiting for it.
func TestBatcherErrorGoesToEveryWaiter(t *testing.T) {
	r := newCallRecorder()
	r.hold = make(chan struct{})
	b := newBatcher(10, r.call)
	answers := make(chan answer, 10)
	ask(context.Background(), b, answers, "first")
	r.waitSent(t, 1)
	for i := range 5 {
		ask(context.Background(), b, answers, fmt.Sprint("k", i))
	}
	waitPending(t, b, 5)
	boom := errors.New("boom")
	r.mu.Lock()
	r.err = boom
	r.mu.Unlock()
	close(r.hold)
	for range 6 {
		if a := <-answers; !errors.Is(a.err, boom) {
			t.Errorf("lookup of %s = %v, %v; want the call's error", a.key, a.found, a.err)
		}
	}
}

// A caller that stops waiting does not cancel the call for the others; a
// call no one waits for is cancelled, and keys no one waits for are not
// sent.
func TestBatcherCancellation(t *testing.T) {
	r := newCallRecorder()
	r.hold = make(chan struct{})
	b := newBatcher(10, r.call)
	answers := make(chan answer, 10)
	expect := func(key string, err error) {
		t.Helper()
		a := <-answers
		if a.key != key || !errors.Is(a.err, err) {
			t.Fatalf("lookup of %s = %v, %v; want %s answered with %v", a.key, a.found, a.err, key, err)
		}
	}
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	ctxD, cancelD := context.WithCancel(context.Background())
	defer func() { cancelA(); cancelB(); cancelD() }()
	ask(ctxA, b, answers, "a")
	r.waitSent(t, 1)
	ask(ctxB, b, answers, "x")
	ask(context.Background(), b, answers, "y")
	ask(ctxD, b, answers, "z")
	waitPending(t, b, 3)

	cancelD() // z is asked for by no one now
	expect("z", context.Canceled)
	waitPending(t, b, 2)
	cancelA() // no one waits for the call of a: it is cancelled, and x and y go
	expect("a", context.Canceled)
	r.waitSent(t, 1)
	cancelB() // y still waits for the call it shares with x
	expect("x", context.Canceled)
	r.mu.Lock()
	shared := r.ctxs[1]
	r.mu.Unlock()
	if err := shared.Err(); err != nil {
		t.Fatalf("the call of x and y is cancelled (%v) while y waits for it", err)
	}
	close(r.hold)
	expect("y", nil)
	if want := [][]string{{"a"}, {"x", "y"}}; !slices.EqualFunc(r.calls, want, slices.Equal) {
		t.Errorf("calls %v, want %v", r.calls, want)
	}
}
