package chaos_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// hostile is one hostile request and the answers it may get.
type hostile struct {
	name, method, path, contentType, body string
	// statuses are the answers accepted; never a 5xx.
	statuses []int
	// pointer, when set, must be the pointer of the answer's first error.
	pointer string
}

// Bounds every answer to a hostile request is held to.
const (
	// maxHostileAnswer bounds an answer's body: an error lists at most 100
	// violations.
	maxHostileAnswer = 64 << 10
	// maxHostileGrowth bounds how much the resident memory of landlord
	// serve may grow while it answers every hostile request
	// hostileCopies times at once: before the depth limit, 8 copies of the
	// 20 KB body nested 9,990 deep cost 657 MB.
	maxHostileGrowth = 64 << 20
	hostileCopies    = 8
)

// hostileRequests are the bodies issue 17's probes sent, and their kin.
func hostileRequests() []hostile {
	deep := func(n int, open, close string) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	labels := func(n int, key func(i int) string) string {
		var b strings.Builder
		b.WriteString(`{"name":"many-labels","compute_config":{"image":"a"},"labels":{`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:\"v\"", key(i))
		}
		b.WriteString("}}")
		return b.String()
	}
	const js, patch = "application/json", "application/merge-patch+json"
	create := func(name, body string, pointer string, statuses ...int) hostile {
		return hostile{name: "create: " + name, method: "POST", path: "/v1/tenants", contentType: js, body: body, statuses: statuses, pointer: pointer}
	}
	patchOf := func(name, body string, pointer string, statuses ...int) hostile {
		return hostile{name: "patch: " + name, method: "PATCH", path: "/v1/tenants/target", contentType: patch, body: body, statuses: statuses, pointer: pointer}
	}
	return []hostile{
		create("config nested 9,990 deep (objects)", `{"name":"deep","compute_config":{"image":"a","x-a":`+deep(9990, `{"a":`, "}")+`}}`, "", 422),
		create("config nested 9,990 deep (arrays)", `{"name":"deep","compute_config":{"image":"a","x-a":`+deep(9990, "[", "]")+`}}`, "", 422),
		create("labels nested 1,000 deep", `{"name":"deep","compute_config":{"image":"a"},"labels":`+deep(1000, `{"a":`, "}")+`}`, "", 422),
		create("a repeated key at the top", `{"name":"dup","name":"dup2","compute_config":{"image":"a"}}`, "/name", 422),
		create("a repeated key in the config", `{"name":"dup","compute_config":{"image":"a","image":"b"}}`, "/compute_config/image", 422),
		create("a fractional port", `{"name":"num","compute_config":{"image":"a","ports":[{"container_port":80.5}]}}`, "/compute_config/ports/0/container_port", 422),
		create("a port past any integer", `{"name":"num","compute_config":{"image":"a","ports":[{"container_port":1e400}]}}`, "/compute_config/ports/0/container_port", 422),
		create("a name that is a number", `{"name":1e400,"compute_config":{"image":"a"}}`, "/name", 400),
		create("20,000 bad label keys", labels(20000, func(i int) string { return fmt.Sprintf("-bad-%d-", i) }), "", 400),
		create("20,000 good labels", labels(20000, func(i int) string { return fmt.Sprintf("k%d", i) }), "/labels", 400),
		create("a body over the limit", `{"name":"big","compute_config":{"image":"a","env":{"X":"`+strings.Repeat("x", 2<<20)+`"}}}`, "", 413),
		create("a name of 900 KB", `{"name":"`+strings.Repeat("n", 900<<10)+`","compute_config":{"image":"a"}}`, "/name", 400),
		create("a label key of 900 KB", `{"name":"lk","compute_config":{"image":"a"},"labels":{"`+strings.Repeat("k", 900<<10)+`":"v"}}`, "/labels", 422),
		create("a label value of 900 KB", `{"name":"lv","compute_config":{"image":"a"},"labels":{"k":"`+strings.Repeat("v", 900<<10)+`"}}`, "", 400),
		create("an env name of 900 KB", `{"name":"en","compute_config":{"image":"a","env":{"`+strings.Repeat("E-", 450<<10)+`":"v"}}}`, "/compute_config/env", 422),
		create("an image of 900 KB", `{"name":"im","compute_config":{"image":"`+strings.Repeat("I", 900<<10)+`"}}`, "/compute_config/image", 422),
		create("a provider of 900 KB", `{"name":"pr","compute_config":{"compute_provider":"`+strings.Repeat("p", 900<<10)+`","image":"a"}}`, "/compute_config/compute_provider", 422),
		create("malformed JSON", `{"name":"bad","compute_config":{"image":`, "", 400, 422),
		create("two values", `{"name":"two","compute_config":{"image":"a"}} {}`, "", 400, 422),
		create("invalid UTF-8", "{\"name\":\"utf\xff\",\"compute_config\":{\"image\":\"a\"}}", "", 400, 422),
		create("an unknown field", `{"name":"unknown","compute_config":{"image":"a"},"owner":"x"}`, "/owner", 400),
		create("a config that is an array", `{"name":"arr","compute_config":[1,2,3]}`, "/compute_config", 400),
		{name: "create: a form body", method: "POST", path: "/v1/tenants", contentType: "application/x-www-form-urlencoded", body: "name=x", statuses: []int{400}},
		patchOf("nested 9,990 deep", `{"compute_config":{"x-a":`+deep(9990, `{"a":`, "}")+`}}`, "", 422),
		patchOf("a repeated key", `{"labels":{"a":"1","a":"2"}}`, "/labels/a", 422),
		patchOf("a fractional port", `{"compute_config":{"ports":[{"container_port":1e2},{"container_port":0.5}]}}`, "/compute_config/ports/1/container_port", 422),
		patchOf("a body over the limit", `{"labels":{"a":"`+strings.Repeat("x", 2<<20)+`"}}`, "", 413),
	}
}

// TestHostileBodies sends every hostile request to `landlord serve`,
// hostileCopies at once: each is answered with the 4xx it deserves (never a
// 5xx), with the pointer of the field at fault, in a body of at most
// maxHostileAnswer; the process's resident memory grows by at most
// maxHostileGrowth; and nothing is stored or changed.
func TestHostileBodies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	p := servetest.New(t, servetest.Options{Config: "compute:\n  mock: {}\n"})
	p.Start()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tenants := p.Client().Tenants()
	target := servetest.CreateTenant(ctx, t, tenants, "target", json.RawMessage(`{"image": "app:1"}`))
	before := rss(t, p)

	var largest int
	var mu sync.Mutex
	for _, h := range hostileRequests() {
		var wg sync.WaitGroup
		for range hostileCopies {
			wg.Go(func() {
				status, code, pointer, size := send(t, p.Addr(), h)
				mu.Lock()
				largest = max(largest, size)
				mu.Unlock()
				switch {
				case status == 0:
				case !slices.Contains(h.statuses, status):
					t.Errorf("%s: %d %s, want %v", h.name, status, code, h.statuses)
				case h.pointer != "" && pointer != h.pointer:
					t.Errorf("%s: %d %s at %q, want the pointer %q", h.name, status, code, pointer, h.pointer)
				}
				if size > maxHostileAnswer {
					t.Errorf("%s: a %d-byte answer, want at most %d", h.name, size, maxHostileAnswer)
				}
			})
		}
		wg.Wait()
	}
	after := rss(t, p)
	t.Logf("%d hostile requests, %d at once: largest answer %d bytes; resident memory %d MiB before, %d MiB after",
		len(hostileRequests())*hostileCopies, hostileCopies, largest, before>>20, after>>20)
	if after-before > maxHostileGrowth {
		t.Errorf("resident memory grew by %d MiB answering hostile requests, want at most %d MiB", (after-before)>>20, maxHostileGrowth>>20)
	}

	stored := 0
	for tn, err := range tenants.All(ctx, llclient.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		stored++
		if tn.Name == "target" && tn.Version != target.Version {
			t.Errorf("a refused patch changed the target: version %d, was %d", tn.Version, target.Version)
		}
	}
	if stored != 1 {
		t.Errorf("%d tenants are stored after the hostile requests, want 1 (the target)", stored)
	}
}

// send sends h and returns the status, the problem's code and first
// pointer, and the body's size; status 0 when the request failed, which is
// reported.
func send(t *testing.T, addr string, h hostile) (status int, code, pointer string, size int) {
	req, err := http.NewRequest(h.method, "http://"+addr+h.path, strings.NewReader(h.body))
	if err != nil {
		t.Error(err)
		return 0, "", "", 0
	}
	req.Header.Set("Content-Type", h.contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s: %v", h.name, err)
		return 0, "", "", 0
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Errorf("%s: read the answer: %v", h.name, err)
	}
	var p struct {
		Code, Detail string
		Errors       []struct{ Pointer string }
	}
	_ = json.Unmarshal(b, &p)
	if len(p.Errors) > 0 {
		pointer = p.Errors[0].Pointer
	}
	// code says what the answer was: its code and, cut, its detail.
	return res.StatusCode, p.Code + " (" + wire.Quote(p.Detail) + ")", pointer, len(b)
}

// rss reads the process's resident memory from its /metrics.
func rss(t *testing.T, p *servetest.Process) int64 {
	t.Helper()
	res, err := http.Get("http://" + p.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int64(f)
		}
	}
	t.Fatalf("no process_resident_memory_bytes in /metrics: %v", sc.Err())
	return 0
}
