package ecs

// RememberedServices counts the services whose last task listing p keeps
// (see Provider.knownTasks), over every cluster it reads.
func RememberedServices(p *Provider) int {
	n := 0
	p.batches.Range(func(_, v any) bool {
		r := v.(*clusterReads)
		r.mu.Lock()
		n += len(r.known)
		r.mu.Unlock()
		return true
	})
	return n
}
