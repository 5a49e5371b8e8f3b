package servetest

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// Serve runs a landlord server in the test's process until ctx ends,
// logging JSON lines to logs: cmd/landlord's serve, or internal/server's
// New and Run.
type Serve func(ctx context.Context, logs io.Writer) error

// started is the log line a server writes once it serves.
const started = `"msg":"landlord started"`

// InProcess runs serve until the test ends and returns its log once it
// has started. A serve that returns before it starts fails the test at
// once; one that returns an error later fails it when it ends.
func InProcess(t *testing.T, serve Serve) *providertest.LogBuffer {
	t.Helper()
	logs := &providertest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	var serveErr error
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		serveErr = serve(ctx, logs)
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
		if serveErr != nil && !t.Failed() {
			t.Errorf("serve: %v\n%s", serveErr, logs)
		}
	})
	poll.Until(t, "serve starts", StartTimeout, func() (bool, string) {
		select {
		case <-stopped:
			t.Fatalf("serve did not start: %v\n%s", serveErr, logs)
		default:
		}
		return strings.Contains(logs.String(), started), logs.String()
	})
	return logs
}

// UntilStarted runs serve until it has started, stops it, and returns
// what it logged. A serve that fails fails the test.
func UntilStarted(t *testing.T, serve Serve) string {
	t.Helper()
	logs := &providertest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, logs) }()
	poll.Until(t, "serve starts", StartTimeout, func() (bool, string) {
		return strings.Contains(logs.String(), started), logs.String()
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, logs)
	}
	return logs.String()
}
