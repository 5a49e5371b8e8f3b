package chaos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// createOutcome is what one retrying client saw while creating one tenant.
type createOutcome struct {
	// Name is the tenant's name; ID the id its 201 gave, "" without one.
	Name, ID string
	// Replayed is set when the 201 was a replay (Idempotent-Replayed).
	Replayed bool
	// Attempts counts the requests sent; ConnErrors those that got no
	// answer (landlord was down or died with the request), InProgress the
	// 409 idempotency_in_progress, Retryable the 502, 503 and 504.
	Attempts, ConnErrors, InProgress, Retryable int
	// Waited is the time spent honouring Retry-After.
	Waited time.Duration
	// Unexpected lists every other answer: a 500, a 409 name_taken, a 4xx.
	Unexpected []string
	// Err is set when the client gave up: a final unexpected answer or the
	// test's deadline.
	Err error
}

// retryingCreator creates tenants chaos-0000… through POST /v1/tenants as a
// careful client would: each with an Idempotency-Key of its own, retrying
// the same request on a connection error, a 5xx and a 409
// idempotency_in_progress (after its Retry-After), until a 201.
type retryingCreator struct {
	base string
	http *http.Client
	// next is the index of the next tenant a client takes; done counts
	// the tenants finished, with a 201 or not.
	next, done atomic.Int64
	mu         sync.Mutex
	outcomes   []createOutcome
	// maxRetryAfter is the longest Retry-After seen, in seconds.
	maxRetryAfter atomic.Int64
}

func newRetryingCreator(addr string, tenants int) *retryingCreator {
	return &retryingCreator{
		base: "http://" + addr,
		// A request that hangs is a failure to retry like a refused one.
		http:     &http.Client{Timeout: 20 * time.Second},
		outcomes: make([]createOutcome, tenants),
	}
}

// tenantName and idempotencyKey name the i-th tenant and its key.
func tenantName(i int) string     { return fmt.Sprintf("chaos-%04d", i) }
func idempotencyKey(i int) string { return fmt.Sprintf("chaos-create-%04d", i) }

// createBody is the i-th tenant's request body, the same on every retry.
func createBody(i int) []byte {
	return fmt.Appendf(nil, `{"name": %q, "compute_config": {"image": "example.com/app:1"}, "labels": {"suite": "chaos"}}`, tenantName(i))
}

// run creates tenants until none is left or ctx ends.
func (c *retryingCreator) run(ctx context.Context) {
	for {
		i := int(c.next.Add(1)) - 1
		if i >= len(c.outcomes) {
			return
		}
		o := c.create(ctx, i)
		c.mu.Lock()
		c.outcomes[i] = o
		c.mu.Unlock()
		c.done.Add(1)
	}
}

// results returns every tenant's outcome, once the clients have returned.
func (c *retryingCreator) results() []createOutcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]createOutcome(nil), c.outcomes...)
}

// answer is one response to a create.
type answer struct {
	status     int
	code       string
	retryAfter string
	replayed   bool
	id, name   string
	detail     string
}

// create creates the i-th tenant, retrying until a 201, a final answer or
// the end of ctx.
func (c *retryingCreator) create(ctx context.Context, i int) createOutcome {
	o := createOutcome{Name: tenantName(i)}
	for {
		if err := ctx.Err(); err != nil {
			o.Err = fmt.Errorf("gave up after %d attempts: %w", o.Attempts, err)
			return o
		}
		o.Attempts++
		a, err := c.post(ctx, i)
		switch {
		case err != nil:
			o.ConnErrors++
			sleep(ctx, 20*time.Millisecond+rand.N(80*time.Millisecond))
		case a.status == http.StatusCreated:
			o.ID, o.Replayed = a.id, a.replayed
			if a.name != o.Name {
				o.Err = fmt.Errorf("the 201 names tenant %q", a.name)
			}
			return o
		case a.status == http.StatusConflict && a.code == "idempotency_in_progress":
			o.InProgress++
			wait := c.retryAfter(a.retryAfter)
			o.Waited += wait
			sleep(ctx, wait)
		case a.status == http.StatusInternalServerError:
			o.Unexpected = append(o.Unexpected, a.String())
			sleep(ctx, 100*time.Millisecond)
		case a.status >= 500:
			o.Retryable++
			sleep(ctx, c.retryAfter(a.retryAfter))
		default:
			o.Unexpected = append(o.Unexpected, a.String())
			o.Err = fmt.Errorf("final answer %s", a)
			return o
		}
	}
}

// retryAfter reads a Retry-After in seconds; a missing or odd one means a
// second.
func (c *retryingCreator) retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		n = 1
	}
	for {
		m := c.maxRetryAfter.Load()
		if int64(n) <= m || c.maxRetryAfter.CompareAndSwap(m, int64(n)) {
			break
		}
	}
	return time.Duration(n) * time.Second
}

// post sends the i-th tenant's create once. An error means no answer.
func (c *retryingCreator) post(ctx context.Context, i int) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/tenants", bytes.NewReader(createBody(i)))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idempotencyKey(i))
	res, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return answer{}, err // the process died mid-answer
	}
	a := answer{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), replayed: res.Header.Get("Idempotent-Replayed") == "true"}
	var v struct {
		ID, Name, Code, Detail string
	}
	if err := json.Unmarshal(b, &v); err != nil {
		a.detail = string(b)
		return a, nil
	}
	a.id, a.name, a.code, a.detail = v.ID, v.Name, v.Code, v.Detail
	return a, nil
}

func (a answer) String() string {
	return fmt.Sprintf("%d %s: %s", a.status, a.code, a.detail)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
