package chaos_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestNoSecretInLogsOrResponses drives every API surface that takes or
// returns a tenant's config — create, dry run, replace, patch, get, list,
// events, status, delete, and bad requests that quote the body — with
// secret values, across a kill -9 and a restart, then scans every
// response and every log line landlord wrote for them.
func TestNoSecretInLogsOrResponses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	l := servetest.New(t, servetest.Options{Config: "log_level: debug\ncontroller:\n  lease_ttl: 2s\ncompute:\n  mock: {}\n"})
	l.Start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var secrets []string
	secret := func() string {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		s := "s3cret-" + hex.EncodeToString(b)
		secrets = append(secrets, s)
		return s
	}
	var responses strings.Builder
	do := func(method, path, body string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, "http://"+l.Addr()+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		fmt.Fprintf(&responses, "%s %s → %d %v %s\n", method, path, res.StatusCode, res.Header, b)
		return res.StatusCode
	}
	config := func(s string) string {
		return fmt.Sprintf(`{"image": "app:1", "secrets": {"API_KEY": %q}, "sidecars": [{"name": "side", "image": "s:1", "secrets": {"T": %q}}]}`, s, secret())
	}
	for _, tt := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/v1/tenants?dry_run=true", `{"name": "acme", "compute_config": ` + config(secret()) + `}`, 200},
		{"POST", "/v1/tenants", `{"name": "acme", "compute_config": ` + config(secret()) + `}`, 201},
		{"POST", "/v1/tenants", `{"name": "acme", "compute_config": ` + config(secret()) + `}`, 409},
		{"POST", "/v1/tenants", `{"name": "Bad Name", "compute_config": ` + config(secret()) + `}`, 400},
		{"POST", "/v1/tenants", `{"name": "typo", "compute_config": {"image": "a", "secrets": {"K": "` + secret() + `"}, "imagee": 1}}`, 422},
		{"PUT", "/v1/tenants/acme", `{"compute_config": ` + config(secret()) + `}`, 200},
		{"PATCH", "/v1/tenants/acme", `{"compute_config": {"secrets": {"API_KEY": "` + secret() + `"}}}`, 200},
		{"PATCH", "/v1/tenants/acme", `{"compute_config": {"secrets": {"API_KEY": 7, "X": "` + secret() + `"}}}`, 422},
	} {
		if got := do(tt.method, tt.path, tt.body); got != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, got, tt.want)
		}
	}
	if _, err := l.Client().Tenants().Wait(ctx, "acme", llclient.UntilReady, nil); err != nil {
		t.Fatal(err)
	}
	l.Kill()
	l.Start()
	for _, path := range []string{"/v1/tenants/acme", "/v1/tenants", "/v1/tenants/acme/events"} {
		if got := do("GET", path, ""); got != 200 {
			t.Errorf("GET %s: %d", path, got)
		}
	}
	// The mock's workloads live in its memory, gone with the kill: 404
	// until the controller provisions it again.
	if got := do("GET", "/v1/tenants/acme/status", ""); got != 200 && got != 404 {
		t.Errorf("GET status: %d", got)
	}
	if got := do("DELETE", "/v1/tenants/acme", ""); got != 202 {
		t.Errorf("DELETE: %d", got)
	}
	if _, err := l.Client().Tenants().Wait(ctx, "acme", llclient.UntilDeleted, nil); err != nil && !llclient.IsNotFound(err) {
		t.Fatal(err)
	}
	l.Stop()

	logs, answers := l.Log(), responses.String()
	if !strings.Contains(answers, "[redacted]") || strings.Count(logs, "\n") < 20 {
		t.Fatalf("the scan has too little to read: %d log lines, responses without a redacted secret", strings.Count(logs, "\n"))
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("secret %s is in the log", s)
		}
		if strings.Contains(answers, s) {
			t.Errorf("secret %s is in a response", s)
		}
	}
	var lines int
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var v map[string]any
		if json.Unmarshal([]byte(line), &v) == nil {
			lines++
		}
	}
	t.Logf("scanned %d log lines and %d bytes of responses for %d secret values", lines, len(answers), len(secrets))
}
