package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// recordCompat, when set, records the transcript instead of replaying it.
var recordCompat = flag.String("record-compat", "",
	"play the compatibility script against the landlord serving at this address (host:port or URL) and rewrite "+compatTranscript+" instead of replaying it")

const (
	// compatTranscript is the previous version's answers to the script.
	compatTranscript = "testdata/compat/v-c82c631.jsonl"
	// compatConfig is the configuration the transcript was recorded with.
	compatConfig = "testdata/compat/landlord.yaml"
)

// compatExchange is one line of a transcript: a request and its answer.
type compatExchange struct {
	Step     string         `json:"step"`
	Request  compatRequest  `json:"request"`
	Response compatResponse `json:"response"`
}

// compatRequest is a request as it was sent.
type compatRequest struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header,omitempty"`
	Body   string            `json:"body,omitempty"`
}

// compatResponse is an answer as it came, without the headers in
// compatIgnoredHeaders. A JSON body is kept as JSON, any other as text.
type compatResponse struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header,omitempty"`
	Body   json.RawMessage   `json:"body,omitempty"`
	Text   string            `json:"text,omitempty"`
}

// TestCompatPreviousVersionRequestsAnswerTheSame holds the API to its promise
// that a request of the previous version (c82c631, before placements)
// gets the answer it got then: it replays the transcript of the
// compatibility script (compat_script_test.go) recorded against that
// version's binary on the current server, in order, and compares each
// answer with the recorded one after masking what differs between any
// two runs (compatVolatile: ids, page tokens holding ids, times, request
// ids). Everything else, status, headers and every member of the body,
// must be equal: a tenant without placements looks exactly as it did.
//
// The server runs as the recorded one did (compatConfig): the mock
// provider with the same block, the same tokens, no controller.
//
// To record the transcript again, against the previous version (or any
// landlord: the flag names its address), from the repository's root:
//
//	git worktree add /tmp/oldland c82c631
//	(cd /tmp/oldland && go build -o /tmp/landlord-c82c631 ./cmd/landlord)
//	rm -f /tmp/compat.db*
//	/tmp/landlord-c82c631 serve --config internal/api/testdata/compat/landlord.yaml \
//		--listen 127.0.0.1:18181 --database /tmp/compat.db &
//	go test ./internal/api/ -run TestCompatPreviousVersionRequestsAnswerTheSame -count=1 -record-compat=127.0.0.1:18181
//	kill %1
//
// The database must be new: the script's answers list every tenant.
func TestCompatPreviousVersionRequestsAnswerTheSame(t *testing.T) {
	if *recordCompat != "" {
		recordCompatTranscript(t, *recordCompat)
		return
	}
	transcript := readCompatTranscript(t)
	var steps []string
	for _, x := range transcript {
		steps = append(steps, x.Step)
	}
	if want := compatStepNames(); !slices.Equal(steps, want) {
		t.Fatalf("%s is not the record of the script's steps (record it again, see the test's comment):\n%s", compatTranscript, cmp.Diff(want, steps))
	}
	ts := compatServer(t)
	client := compatClient()
	recorded, live := newCompatVolatile(), newCompatVolatile()
	for i, x := range transcript {
		r := x.Request.rewritten(recorded.replacer(live))
		got, err := compatDo(client, ts.URL, r)
		if err != nil {
			t.Fatalf("request %d (%s): %v", i+1, x.Step, err)
		}
		want, have := recorded.normalize(x.Request, x.Response), live.normalize(r, got)
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("request %d (%s): %s %s is answered otherwise than by c82c631 (-then +now):\n%s", i+1, x.Step, x.Request.Method, x.Request.Path, diff)
		}
	}
}

// compatStepNames are the names of the script's steps, in order.
func compatStepNames() []string {
	out := make([]string, len(compatScript))
	for i, s := range compatScript {
		out[i] = s.name
	}
	return out
}

// compatServer serves the current API as the transcript's server was
// configured (compatConfig).
func compatServer(t *testing.T) *testServer {
	t.Helper()
	cfg, _, err := config.Load(compatConfig, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if on := cfg.Controller.Enabled; on == nil || *on {
		t.Fatalf("%s: the transcript is of a server without a controller (controller.enabled: false); the replay runs none", compatConfig)
	}
	blocks, err := cfg.ComputeBlocks()
	if err != nil {
		t.Fatal(err)
	}
	if def, _ := cfg.ComputeDefault(); def != mock.Name || len(blocks) != 1 || blocks[mock.Name] == nil {
		t.Fatalf("%s: the replay runs the mock provider alone, the default; the configuration has %v, default %q", compatConfig, blocks, def)
	}
	tokens := make([]api.Token, len(cfg.Tokens))
	for i, tk := range cfg.Tokens {
		tokens[i] = api.Token{Name: tk.Name, Secret: tk.Secret, Role: api.Role(tk.Role)}
	}
	return serveOn(t, openStore(t), func(logger *slog.Logger) (provider.Provider, error) {
		return mock.New(mock.Options{Block: blocks[mock.Name], Logger: logger})
	}, tokens...)
}

// compatClient follows no redirect: a redirect is an answer.
func compatClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// readCompatTranscript reads compatTranscript.
func readCompatTranscript(t *testing.T) []compatExchange {
	t.Helper()
	f, err := os.Open(compatTranscript)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []compatExchange
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		var x compatExchange
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.DisallowUnknownFields()
		if err := d.Decode(&x); err != nil {
			t.Fatalf("%s:%d: %v", compatTranscript, line, err)
		}
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", compatTranscript, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no requests", compatTranscript)
	}
	return out
}

// recordCompatTranscript plays the script against the landlord at addr and
// writes what it answers to compatTranscript.
func recordCompatTranscript(t *testing.T, addr string) {
	t.Helper()
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	client := compatClient()
	vars := map[string]string{}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, s := range compatScript {
		r, err := s.resolve(vars)
		if err != nil {
			t.Fatalf("step %d (%s): %v", i+1, s.name, err)
		}
		res, err := compatDo(client, base, r)
		if err != nil {
			t.Fatalf("step %d (%s): %v", i+1, s.name, err)
		}
		if err := res.save(s.save, vars); err != nil {
			t.Fatalf("step %d (%s): %v", i+1, s.name, err)
		}
		if err := enc.Encode(compatExchange{Step: s.name, Request: r, Response: res}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(compatTranscript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(compatTranscript, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d requests against %s in %s", len(compatScript), base, compatTranscript)
}

// resolve is the request s makes, its variables replaced by their values.
func (s compatStep) resolve(vars map[string]string) (compatRequest, error) {
	var pairs []string
	for k, v := range vars {
		pairs = append(pairs, "${"+k+"}", v)
	}
	rep := strings.NewReplacer(pairs...)
	r := compatRequest{Method: s.method, Path: rep.Replace(s.path), Body: rep.Replace(s.body),
		Header: map[string]string{"Authorization": "Bearer " + adminToken}}
	for i := 0; i+1 < len(s.header); i += 2 {
		r.Header[http.CanonicalHeaderKey(s.header[i])] = rep.Replace(s.header[i+1])
	}
	if r.Header["Authorization"] == "" {
		delete(r.Header, "Authorization")
	}
	for _, v := range append([]string{r.Path, r.Body}, mapValues(r.Header)...) {
		if i := strings.Index(v, "${"); i >= 0 {
			return r, fmt.Errorf("%q names a variable no earlier step saved", v[i:])
		}
	}
	return r, nil
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// rewritten is r with rep applied to its path, header values and body.
func (r compatRequest) rewritten(rep *strings.Replacer) compatRequest {
	out := compatRequest{Method: r.Method, Path: rep.Replace(r.Path), Body: rep.Replace(r.Body), Header: map[string]string{}}
	for k, v := range r.Header {
		out.Header[k] = rep.Replace(v)
	}
	return out
}

// save sets the variables the step saves from the answer: each from a
// member of its JSON body, or from a header ("header ETag").
func (res compatResponse) save(from map[string]string, vars map[string]string) error {
	var body map[string]any
	for name, what := range from {
		if h, ok := strings.CutPrefix(what, "header "); ok {
			v := res.Header[http.CanonicalHeaderKey(h)]
			if v == "" {
				return fmt.Errorf("save %s: the answer %d has no %s header", name, res.Status, h)
			}
			vars[name] = v
			continue
		}
		if body == nil {
			if err := json.Unmarshal(res.Body, &body); err != nil {
				return fmt.Errorf("save %s from the answer %d: %w", name, res.Status, err)
			}
		}
		v, ok := body[what].(string)
		if !ok || v == "" {
			return fmt.Errorf("save %s: the answer %d has no %q: %s", name, res.Status, what, res.Body)
		}
		vars[name] = v
	}
	return nil
}

// compatDo sends r to the server at base and returns its answer.
func compatDo(client *http.Client, base string, r compatRequest) (compatResponse, error) {
	req, err := http.NewRequest(r.Method, base+r.Path, strings.NewReader(r.Body))
	if err != nil {
		return compatResponse{}, fmt.Errorf("compat: %w", err)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return compatResponse{}, fmt.Errorf("compat: %s %s: %w", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return compatResponse{}, fmt.Errorf("compat: %s %s: read the answer: %w", r.Method, r.Path, err)
	}
	out := compatResponse{Status: res.StatusCode, Header: map[string]string{}}
	for k, vs := range res.Header {
		if !slices.Contains(compatIgnoredHeaders, k) {
			out.Header[k] = strings.Join(vs, ", ")
		}
	}
	switch {
	case len(body) == 0:
	case json.Valid(body):
		out.Body = body
	default:
		out.Text = string(body)
	}
	return out, nil
}
