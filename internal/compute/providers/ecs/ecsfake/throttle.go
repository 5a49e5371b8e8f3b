package ecsfake

import (
	"fmt"
	"maps"
	"time"
)

// Request throttling follows "Request throttling for the Amazon ECS API"
// (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/request-throttling.html,
// also in the Developer Guide as request-throttling):
//
//   - "Amazon ECS uses the token bucket algorithm to implement API
//     throttling." "each request removes one token from the token bucket."
//   - "API actions are grouped into categories. All API actions in a
//     category share the same token bucket."
//   - "the bucket maximum capacity signifies the burst rate and the bucket
//     refill rate is the sustained rate." "If the bucket is full when refill
//     tokens arrive, they are discarded."
//   - "All API action categories enforce rate quotas for each AWS account on
//     a per-Region basis." A fake serves one account in one region (it
//     refuses requests signed for another), so one set of buckets per
//     Server is ECS's keying.
//   - "If you exceed an API throttling quota, you get the
//     ThrottlingException error code." with the message "Rate exceeded" and
//     "Status Code: 400".
//
// The page's example, 50 tokens refilled at 20 a second, "reaches its
// maximum capacity after 2.5 seconds": refill is continuous, so the fake
// adds tokens in proportion to the time passed on its clock, to the
// nanosecond, and a ManualClock refills exactly as far as it is advanced.

// Bucket is one of ECS's request token buckets: an API action category and
// the actions that share it.
type Bucket struct {
	// Category is the table's "API action category", e.g. "Service read
	// actions".
	Category string
	// Actions are the operations that draw from the bucket.
	Actions []string
	// Capacity is the "Bucket maximum capacity (or Burst rate)": how many
	// requests a full bucket admits at once. It starts full.
	Capacity int
	// Refill is the "Bucket refill rate (or Sustained rate)": tokens added
	// per second.
	Refill int
}

// Rates are the buckets a fake throttles by. An operation in no bucket is
// not throttled.
type Rates []Bucket

// DocumentedRates returns the table of "Request Token Bucket Sizes and
// Refill Rates" in "Request throttling for the Amazon ECS API", the
// categories of every operation the fake serves. ECS applies it in all
// Regions unless AWS Support has raised an account's quota. The result is
// the caller's to change, for a test that wants a smaller bucket.
func DocumentedRates() Rates {
	return Rates{
		{Category: "Cluster read actions", Actions: []string{"DescribeClusters", "ListClusters"}, Capacity: 50, Refill: 20},
		{Category: "Task definition modify actions", Actions: []string{"DeregisterTaskDefinition", "RegisterTaskDefinition"}, Capacity: 20, Refill: 1},
		{Category: "Task definition read actions", Actions: []string{"DescribeTaskDefinition", "ListTaskDefinitions", "ListTaskDefinitionFamilies"}, Capacity: 50, Refill: 20},
		{Category: "Tag modify actions", Actions: []string{"TagResource", "UntagResource"}, Capacity: 20, Refill: 10},
		{Category: "Cluster resource modify actions", Actions: []string{"DeleteAttributes", "DeregisterContainerInstance", "ExecuteCommand", "PutAttributes", "RunTask", "StartTask", "StopTask", "UpdateContainerAgent", "UpdateContainerInstancesStates"}, Capacity: 100, Refill: 40},
		{Category: "Cluster resource read actions", Actions: []string{"DescribeContainerInstances", "DescribeTasks", "ListAttributes", "ListContainerInstances", "ListTasks"}, Capacity: 100, Refill: 20},
		{Category: "Service modify actions", Actions: []string{"CreateService", "DeleteService", "UpdateService"}, Capacity: 50, Refill: 5},
		{Category: "Service read actions", Actions: []string{"DescribeServices", "ListServices"}, Capacity: 100, Refill: 20},
	}
}

// tokenBucket is a Bucket's state. Tokens are counted in billionths so that
// refill at an integer rate per second over a whole number of nanoseconds
// is exact.
type tokenBucket struct {
	rate   Bucket
	nanos  int64 // tokens × 1e9
	filled time.Time
}

const nanoToken = int64(time.Second)

// newBuckets indexes rates by operation, actions of one category sharing a
// bucket, each full at now. It panics on a rate that cannot work, as New
// does on other impossible Options.
func newBuckets(rates Rates, now time.Time) map[string]*tokenBucket {
	if rates == nil {
		return nil
	}
	out := map[string]*tokenBucket{}
	for _, r := range rates {
		if r.Capacity < 1 || r.Refill < 0 {
			panic(fmt.Sprintf("ecsfake: bucket %q: capacity %d and refill %d; want capacity ≥ 1, refill ≥ 0", r.Category, r.Capacity, r.Refill))
		}
		b := &tokenBucket{rate: r, nanos: int64(r.Capacity) * nanoToken, filled: now}
		for _, op := range r.Actions {
			if _, dup := out[op]; dup {
				panic(fmt.Sprintf("ecsfake: %s is in two throttling buckets", op))
			}
			out[op] = b
		}
	}
	return out
}

// take refills the bucket for the time since it was last filled and uses
// one token if there is one. A refused request takes nothing.
func (b *tokenBucket) take(now time.Time) bool {
	full := int64(b.rate.Capacity) * nanoToken
	if elapsed := now.Sub(b.filled); elapsed > 0 {
		b.filled = now
		// Past a day any bucket is full; the bound keeps the product
		// below overflow.
		if elapsed > 24*time.Hour {
			b.nanos = full
		} else {
			b.nanos = min(full, b.nanos+int64(b.rate.Refill)*int64(elapsed))
		}
	}
	if b.nanos < nanoToken {
		return false
	}
	b.nanos -= nanoToken
	return true
}

// throttle admits or refuses a request for op against Options.Throttling,
// counting what it refuses.
func (s *Server) throttle(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[op]
	if !ok || b.take(s.now()) {
		return nil
	}
	s.throttled[op]++
	return errorf(CodeThrottling, "Rate exceeded")
}

// Throttled returns how many requests of each operation Options.Throttling
// refused since the fake started or ResetCalls. They are also in Calls,
// which counts every request received.
func (s *Server) Throttled() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.throttled)
}
