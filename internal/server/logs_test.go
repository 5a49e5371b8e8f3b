package server

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// Starting and stopping a server logs one short line about the partitions
// each at INFO (not one per partition, nor every partition in one line);
// which partitions is at DEBUG.
func TestServeLogsPartitionsInOneLineEach(t *testing.T) {
	run := func(t *testing.T, level string) []logLine {
		cfg := config.Defaults()
		cfg.Listen = servetest.FreeAddr(t)
		cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
		cfg.LogLevel = level
		cfg.SetComputeDefault("mock")
		logs := &providertest.LogBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- serve(ctx, cfg, logs) }()
		poll.Until(t, "serve holds every partition", 30*time.Second, func() (bool, string) {
			return strings.Contains(logs.String(), `"msg":"partitions acquired"`), logs.String()
		})
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("serve: %v\n%s", err, logs)
		}
		return parseLogLines(t, logs.String())
	}

	t.Run("info", func(t *testing.T) {
		lines := run(t, "info")
		var acquired, released, other []string
		for _, l := range lines {
			if !strings.Contains(l.msg, "partition") {
				continue
			}
			switch {
			case len(l.raw) > 300:
				t.Errorf("a partition line of %d characters, want at most 300: %s", len(l.raw), l.raw)
			case l.msg == "partitions acquired":
				acquired = append(acquired, l.raw)
			case l.msg == "partitions released":
				released = append(released, l.raw)
			default:
				other = append(other, l.raw)
			}
		}
		if len(acquired) != 1 || !strings.Contains(acquired[0], `"count":64`) {
			t.Errorf("start-up logged %d partitions acquired lines, want 1 counting 64: %q", len(acquired), acquired)
		}
		if len(released) != 1 || !strings.Contains(released[0], `"count":64`) {
			t.Errorf("stopping logged %d partitions released lines, want 1 counting 64: %q", len(released), released)
		}
		if len(other) > 0 {
			t.Errorf("%d other partition lines at INFO, want none; the first: %s", len(other), other[0])
		}
	})

	t.Run("debug", func(t *testing.T) {
		lines := run(t, "debug")
		perPartition := 0
		var detail []string
		for _, l := range lines {
			switch {
			case l.level == "DEBUG" && (l.msg == "handing a partition over" || l.msg == "partition released"):
				perPartition++
			case l.level == "DEBUG" && (l.msg == "partitions acquired" || l.msg == "partitions released"):
				detail = append(detail, l.raw)
			}
		}
		if perPartition != 2*tenant.Partitions {
			t.Errorf("%d per-partition handover lines at DEBUG, want %d", perPartition, 2*tenant.Partitions)
		}
		if len(detail) == 0 || !strings.Contains(detail[0], `0@1 1@1`) {
			t.Errorf("no DEBUG line lists the partitions acquired: %q", detail)
		}
	})
}

// logLine is one JSON line of serve's log.
type logLine struct {
	raw, level, msg string
}

func parseLogLines(t *testing.T, logs string) []logLine {
	t.Helper()
	var out []logLine
	for raw := range strings.Lines(logs) {
		raw = strings.TrimSuffix(raw, "\n")
		var l struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("a log line that is not JSON: %v: %s", err, raw)
		}
		out = append(out, logLine{raw: raw, level: l.Level, msg: l.Msg})
	}
	return out
}
