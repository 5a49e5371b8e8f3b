package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/config"
)

// syncWriter is a log sink safe for concurrent writes.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestServeRunsTheProduct(t *testing.T) {
	cfg := config.Defaults()
	cfg.Listen = freeAddr(t)
	cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
	logs := &syncWriter{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, "", logs) }()
	base := "http://" + cfg.Listen

	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never answered: %v\n%s", err, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, err := http.Post(base+"/v1/tenants", "application/json", strings.NewReader(`{"name":"acme","compute_config":{"image":"example.com/app:1"}}`))
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("create: %v %v", res, err)
	}
	res.Body.Close()
	for status := ""; status != "ready"; {
		res, err := http.Get(base + "/v1/tenants/acme")
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Status string }
		_ = json.NewDecoder(res.Body).Decode(&got)
		res.Body.Close()
		status = got.Status
		if time.Now().After(deadline) {
			t.Fatalf("the tenant never became ready: %s\n%s", status, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	for _, want := range []string{`"msg":"landlord started"`, `"database":"sqlite:`, `"providers":"mock"`, `"auth":"none (loopback only)"`, `"msg":"lease released"`, `"msg":"landlord stopped"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s", want)
		}
	}
}

func TestServeRefusesBadSettings(t *testing.T) {
	for name, mutate := range map[string]func(*config.Config){
		"no tokens off loopback": func(c *config.Config) { c.Listen = "0.0.0.0:0" },
		"unknown provider":       func(c *config.Config) { c.Compute = map[string]any{"docker2": map[string]any{}} },
		"unknown provider key":   func(c *config.Config) { c.Compute = map[string]any{"mock": map[string]any{"latencyy": "1s"}} },
		"unknown default":        func(c *config.Config) { c.Compute = map[string]any{"default": "nomad", "mock": map[string]any{}} },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Listen = freeAddr(t)
			cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
			mutate(&cfg)
			err := serve(context.Background(), cfg, "", &syncWriter{})
			var coded *exitCodeError
			if !errors.As(err, &coded) || coded.code != exitUsage {
				t.Errorf("serve = %v, want a usage error before anything listens", err)
			}
		})
	}
}
