package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// historyReaders is how many tenants' histories are read at once.
const historyReaders = 8

// histories is what the tenants' histories say of a replica run.
type histories struct {
	ledger Ledger
	// finished are the tenants of victims that the killed replica made
	// ready after the suite read their statuses and before it died: not
	// part of the share it left.
	finished int
	// resumed and ready are, in seconds after the kill, the first event
	// of a tenant of the killed replica's share and the last of them
	// becoming ready; nil without a kill or when none happened after it.
	resumed, ready *float64
}

// checkHistories lists the tenants under prefix and reads the history of
// each: how many are ready, and how many became ready once. victims, the
// killed replica's share, and killedAt are nil and zero without a kill.
func checkHistories(ctx context.Context, c *client.Client, prefix string, created []tenantRef, victims map[string]bool, killedAt time.Time) (histories, error) {
	var h histories
	h.ledger.Created = len(created)
	wasCreated := make(map[string]bool, len(created))
	for _, t := range created {
		wasCreated[t.id] = true
	}
	var found []client.Tenant
	for t, err := range c.Tenants().All(ctx, client.ListOptions{NamePrefix: prefix, PageSize: 500}) {
		if err != nil {
			return h, fmt.Errorf("list the tenants: %w", err)
		}
		found = append(found, t)
	}
	h.ledger.Found = len(found)
	seen := make(map[string]bool, len(found))
	for _, t := range found {
		seen[t.ID] = true
		if !wasCreated[t.ID] {
			h.ledger.Unexpected++
		}
		if t.Status == client.StatusReady {
			h.ledger.Ready++
		}
	}
	for id := range wasCreated {
		if !seen[id] {
			h.ledger.Lost++
		}
	}

	var mu sync.Mutex
	var firstErr error
	var resumed, ready time.Time
	parallel(ctx, len(found), historyReaders, func(ctx context.Context, _, i int) {
		t := found[i]
		readies := 0
		finished := false
		var first, readyAt time.Time
		for e, err := range c.Tenants().AllEvents(ctx, t.ID, client.EventOptions{PageSize: 500}) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("read the history of %s: %w", t.Name, err)
				}
				mu.Unlock()
				return
			}
			if e.To == client.StatusReady {
				readies++
			}
			switch {
			case !victims[t.ID]:
			case !e.Time.After(killedAt):
				finished = finished || e.To == client.StatusReady
			default:
				if first.IsZero() {
					first = e.Time
				}
				if e.To == client.StatusReady {
					readyAt = e.Time
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case readies == 1:
			h.ledger.ReadyOnce++
		case readies > 1:
			h.ledger.ReadyTwice++
		}
		if finished {
			h.finished++
		}
		if !first.IsZero() && (resumed.IsZero() || first.Before(resumed)) {
			resumed = first
		}
		if readyAt.After(ready) {
			ready = readyAt
		}
	})
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return h, firstErr
	}
	if !resumed.IsZero() {
		x := seconds(resumed.Sub(killedAt))
		h.resumed = &x
	}
	if !ready.IsZero() {
		x := seconds(ready.Sub(killedAt))
		h.ready = &x
	}
	return h, nil
}

// provisionMetric is the counter of provider operations on /metrics.
const provisionMetric = "landlord_provider_operations_total{"

// provisions reads the provisions that succeeded from the server's
// /metrics: the tenants this replica provisioned.
func provisions(ctx context.Context, hc *http.Client, address string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, address+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return 0, fmt.Errorf("read /metrics: %s", resp.Status)
	}
	return parseProvisions(resp.Body)
}

// parseProvisions sums the provider operations counter's samples of
// successful provisions in a Prometheus text exposition.
func parseProvisions(r io.Reader) (int, error) {
	total := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		labels, value, ok := strings.Cut(strings.TrimPrefix(line, provisionMetric), "} ")
		if !ok || !strings.HasPrefix(line, provisionMetric) ||
			!strings.Contains(labels, `operation="provision"`) || !strings.Contains(labels, `outcome="success"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return 0, fmt.Errorf("/metrics: %q: %w", line, err)
		}
		total += int(v)
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read /metrics: %w", err)
	}
	return total, nil
}
