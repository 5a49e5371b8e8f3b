// Package tenantlock serializes a provider's operations on one tenant
// within the process, while operations on different tenants run in
// parallel. Across processes, providers rely on their platform's own
// guarantees (names, tokens, labels) instead.
package tenantlock

import "sync"

// Locks holds one mutex per tenant id in use. The zero value is ready to
// use; a Locks must not be copied after first use.
type Locks struct {
	mu    sync.Mutex
	locks map[string]*lock
}

type lock struct {
	mu   sync.Mutex
	refs int
}

// Lock waits for the tenant's lock and returns the function that releases
// it. A lock nobody holds or waits for is forgotten.
func (l *Locks) Lock(tenantID string) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*lock{}
	}
	k := l.locks[tenantID]
	if k == nil {
		k = &lock{}
		l.locks[tenantID] = k
	}
	k.refs++
	l.mu.Unlock()
	k.mu.Lock()
	return func() {
		k.mu.Unlock()
		l.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(l.locks, tenantID)
		}
		l.mu.Unlock()
	}
}

// Len is how many tenants' locks are held or waited for.
func (l *Locks) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.locks)
}
