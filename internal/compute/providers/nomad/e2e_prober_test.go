package nomad_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
)

// probeEvery is how often a prober looks.
const probeEvery = 100 * time.Millisecond

// probeClient opens a connection per request, as a new client of the
// tenant would: a connection kept from an earlier probe could reach a
// workload no new one can.
var probeClient = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// look is one probe: the tenant as the API showed it, and whether the
// endpoint it reported then answered.
type look struct {
	at      time.Time // when the endpoint was probed
	address string
	// err is why the endpoint did not answer, or (api) why the API did
	// not show the tenant, when the endpoint was not probed.
	err error
	api bool
	// step and other are the move's step and its other workload's status
	// as the API showed them; "" without a move.
	step, other string
}

// prober GETs a tenant from the API every probeEvery and probes the
// endpoint the API reports at that moment (the tenant's first), as a
// client that follows the API would.
type prober struct {
	quit  chan struct{}
	done  chan struct{}
	looks []look
}

// startProber starts a prober of tenant id; stop ends it.
func startProber(tenants *llclient.Tenants, id string) *prober {
	p := &prober{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(probeEvery)
		defer tick.Stop()
		for {
			p.looks = append(p.looks, lookAt(tenants, id))
			select {
			case <-p.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// stop stops the prober and returns its looks, oldest first.
func (p *prober) stop() []look {
	close(p.quit)
	<-p.done
	return p.looks
}

// lookAt GETs the tenant and probes its first endpoint with GET /healthz.
func lookAt(tenants *llclient.Tenants, id string) look {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tn, err := tenants.Get(ctx, id, llclient.GetOptions{})
	l := look{at: time.Now()}
	if err != nil {
		l.err, l.api = err, true
		return l
	}
	if len(tn.Placements) > 0 && tn.Placements[0].Move != nil {
		l.step, l.other = tn.Placements[0].Move.Step, tn.Placements[0].Move.Other.Status
	}
	if len(tn.Endpoints) == 0 {
		l.err = fmt.Errorf("the API reports no endpoint (tenant %s)", tn.Status)
		return l
	}
	l.address = tn.Endpoints[0].Address
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+l.address+"/healthz", nil)
	resp, err := probeClient.Do(req)
	if err != nil {
		l.err = err
		return l
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		l.err = fmt.Errorf("GET /healthz: %s", resp.Status)
	}
	return l
}

// gap is what a prober saw of a tenant's availability.
type gap struct {
	probes    int // endpoint probes
	failed    int // of them, failed
	apiErrors int // looks whose API GET failed, which probed nothing
	// longest is the longest run of consecutive failed probes: from its
	// first failure to the next probe that answered (its last failure,
	// when none answered after it).
	longest  time.Duration
	failures []look
}

// gapOf is the gap in looks between from and to.
func gapOf(looks []look, from, to time.Time) gap {
	var g gap
	var runStart, last time.Time
	for _, l := range looks {
		if l.at.Before(from) || l.at.After(to) {
			continue
		}
		if l.api {
			g.apiErrors++
			continue
		}
		g.probes++
		if l.err != nil {
			g.failed++
			g.failures = append(g.failures, l)
			if runStart.IsZero() {
				runStart = l.at
			}
			last = l.at
			continue
		}
		if !runStart.IsZero() {
			g.longest = max(g.longest, l.at.Sub(runStart))
			runStart = time.Time{}
		}
	}
	if !runStart.IsZero() {
		g.longest = max(g.longest, last.Sub(runStart))
	}
	return g
}

// gapOf counts the endpoint's failures between from and to, not the API's,
// and measures a run of failures up to the probe that answers after it.
func TestGapOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	down := errors.New("connection refused")
	looks := []look{
		{at: at(0), err: down}, // before from
		{at: at(100)},
		{at: at(200), err: down},
		{at: at(300), err: down},
		{at: at(400), err: down, api: true},
		{at: at(500)},
		{at: at(600), err: down},
		{at: at(700)},
		{at: at(800), err: down}, // after to
	}
	g := gapOf(looks, at(50), at(750))
	if g.probes != 6 || g.failed != 3 || g.apiErrors != 1 || g.longest != 300*time.Millisecond || len(g.failures) != 3 {
		t.Errorf("gapOf = %+v, want 6 probes, 3 failed, 1 API error, longest 300ms", g)
	}
	if g := gapOf(looks, at(550), at(900)); g.failed != 2 || g.longest != 100*time.Millisecond {
		t.Errorf("gapOf ending in a failure = %+v, want 2 failed, longest 100ms (600 to 700)", g)
	}
	if g := gapOf(looks[5:], at(500), at(650)); g.failed != 1 || g.longest != 0 {
		t.Errorf("gapOf of one last failure = %+v, want 1 failed, longest 0", g)
	}
}
