package chaos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/events/webhooktest"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// webhookKillConfig is killLoopConfig's, with webhooks to a loopback
// receiver (allowed), a 1 s attempt timeout (the receiver's hangs end so)
// and a short retry schedule: the run's length, not its rules, is short.
const webhookKillConfig = killLoopConfig + `events:
  allow_networks: [127.0.0.1/32]
  timeout: 1s
  retry_initial: 50ms
  retry_max: 500ms
  poll: 100ms
`

// The receiver's answers: 10 % of requests get a 500, 1 % hang until
// landlord gives up on them.
const (
	webhookFailShare = 0.10
	webhookHangShare = 0.01
)

// TestKillLoopWebhooks is issue 39's chaos run: killLoopTenants tenants
// are created while landlord serve is killed with SIGKILL killLoopKills
// times, and a subscription's receiver answers 500 to 10 % of deliveries
// and hangs on 1 %. Every event of the feed must reach the receiver with a
// 2xx at least once, each tenant's in the order of the feed, every
// request signed as the Standard Webhooks reference verification accepts,
// and the duplicates of an event carrying its id and its very bytes.
func TestKillLoopWebhooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Run("sqlite", func(t *testing.T) { webhookKillLoop(t, "") })
	t.Run("postgres", func(t *testing.T) { webhookKillLoop(t, pgtest.NewDatabase(t)) })
}

func webhookKillLoop(t *testing.T, database string) {
	secret := events.NewSecret()
	var fails, hangs atomic.Int64
	rc := &webhooktest.Receiver{Secrets: []string{secret}, Hang: 5 * time.Second, Answer: func(*webhooktest.Request) int {
		switch x := rand.Float64(); {
		case x < webhookHangShare:
			hangs.Add(1)
			return 0
		case x < webhookHangShare+webhookFailShare:
			fails.Add(1)
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	}}
	receiver := httptest.NewServer(rc)
	defer receiver.Close()

	p := servetest.New(t, servetest.Options{Config: webhookKillConfig, Database: database})
	p.Start()
	ctx, cancel := context.WithTimeout(t.Context(), 2*killLoopTimeout)
	defer cancel()
	subscribe(ctx, t, p.Addr(), receiver.URL, secret)

	began := time.Now()
	creator := newRetryingCreator(p.Addr(), killLoopTenants)
	kills, _ := createKilling(ctx, p, creator)
	if kills < killLoopKills {
		t.Errorf("landlord was killed %d times, want %d: the clients finished first", kills, killLoopKills)
	}
	checkAnswers(t, creator.results())
	readyIn := waitAllReady(ctx, t, p.Client().Tenants())

	feed := readFeed(ctx, t, p.Addr())
	if len(feed) < 2*killLoopTenants {
		t.Errorf("the feed has %d events, want at least %d (each tenant's created and ready)", len(feed), 2*killLoopTenants)
	}
	want := map[string]wire.CloudEvent{}
	for _, e := range feed {
		want[e.ID] = e
	}
	deliveredAll := time.Now()
	for {
		missing := 0
		for id := range want {
			if !okDelivered(rc.Requests())[id] {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of %d events were never delivered", missing, len(want))
		}
		sleep(ctx, 100*time.Millisecond)
	}
	lag := time.Since(deliveredAll)

	reqs := rc.Requests()
	checkDeliveries(t, reqs, want)
	dups := len(reqs) - len(want)
	t.Logf("%d tenants, %d kills, all ready %v after the creates (%v in all); %d events, %d requests (%d × 500, %d hung, %d more than one per event), all delivered %v after the feed was read",
		killLoopTenants, kills, readyIn.Round(time.Millisecond), time.Since(began).Round(time.Millisecond), len(want), len(reqs), fails.Load(), hangs.Load(), dups, lag.Round(time.Millisecond))
}

// subscribe creates the subscription to every event.
func subscribe(ctx context.Context, t *testing.T, addr, url, secret string) {
	t.Helper()
	body, _ := json.Marshal(wire.CreateSubscriptionRequest{Name: "receiver", URL: url, Secret: secret})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/subscriptions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		var p wire.Problem
		_ = json.NewDecoder(resp.Body).Decode(&p)
		t.Fatalf("create the subscription: %d %+v", resp.StatusCode, p)
	}
}

// readFeed reads the whole feed, page by page.
func readFeed(ctx context.Context, t *testing.T, addr string) []wire.CloudEvent {
	t.Helper()
	var out []wire.CloudEvent
	after := ""
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/v1/events?page_size=500&after=%s", addr, after), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page wire.EventFeed
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("read the feed after %q: %d %v", after, resp.StatusCode, err)
		}
		if len(page.Events) == 0 {
			return out
		}
		out = append(out, page.Events...)
		after = page.Next
	}
}

// okDelivered are the ids of the events the receiver answered with a 2xx.
func okDelivered(reqs []webhooktest.Request) map[string]bool {
	ok := map[string]bool{}
	for _, r := range reqs {
		if r.Status >= 200 && r.Status < 300 {
			ok[r.ID] = true
		}
	}
	return ok
}

// checkDeliveries checks every request the receiver got: it verifies, it
// is an event of the feed with the feed's sequence, its duplicates carry
// the same bytes, and each tenant's arrive in the feed's order (a retry
// of an event may come again, never one before an event already sent).
func checkDeliveries(t *testing.T, reqs []webhooktest.Request, feed map[string]wire.CloudEvent) {
	t.Helper()
	bodies := map[string][]byte{}
	last := map[string]int64{}
	bad := 0
	fail := func(format string, args ...any) {
		bad++
		if bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	for _, r := range reqs {
		if r.VerifyError != nil {
			fail("event %s: the signature does not verify: %v", r.ID, r.VerifyError)
		}
		e, ok := feed[r.ID]
		switch {
		case !ok:
			fail("event %s was delivered but is not in the feed", r.ID)
		case e.Sequence != fmt.Sprint(r.Sequence):
			fail("event %s: delivered with sequence %d, the feed's is %s", r.ID, r.Sequence, e.Sequence)
		}
		if prev, ok := bodies[r.ID]; ok && !bytes.Equal(prev, r.Body) {
			fail("event %s: two deliveries differ", r.ID)
		}
		bodies[r.ID] = r.Body
		if r.Sequence < last[r.Subject] {
			fail("%s: event %d arrived after %d", r.Subject, r.Sequence, last[r.Subject])
		}
		last[r.Subject] = max(last[r.Subject], r.Sequence)
	}
	if bad > 0 {
		t.Errorf("%d bad deliveries of %d", bad, len(reqs))
	}
}
