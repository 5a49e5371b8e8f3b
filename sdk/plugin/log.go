package plugin

import (
	"context"
	"io"
	"log"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// A plugin's log lines travel on its stderr as the JSON lines go-plugin
// reads (hclog's format: "@level", "@message", "@timestamp" and the
// attributes); landlord writes each to its own log, with the plugin's name.

// hclogTime is the "@timestamp" layout go-plugin parses.
const hclogTime = "2006-01-02T15:04:05.000000Z07:00"

// stderrHandler is the slog handler of a plugin: JSON lines on w, in the
// form go-plugin turns into landlord's log lines.
func stderrHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) > 0 {
			return a
		}
		switch a.Key {
		case slog.TimeKey:
			return slog.String("@timestamp", a.Value.Time().Format(hclogTime))
		case slog.LevelKey:
			return slog.String("@level", hclogLevel(a.Value.Any().(slog.Level)))
		case slog.MessageKey:
			return slog.String("@message", a.Value.String())
		}
		return a
	}})
}

func hclogLevel(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	default:
		return "error"
	}
}

// hostLogger is the hclog.Logger go-plugin writes to on landlord's side
// (what it does, and the plugin's stderr), over landlord's slog logger.
type hostLogger struct {
	log  *slog.Logger
	name string
	args []any
	// stderr marks the logger of the plugin's stderr: its lines keep their
	// level. go-plugin's own lines about the process are debug below a
	// warning; landlord says at info what happens to a plugin.
	stderr bool
}

var _ hclog.Logger = (*hostLogger)(nil)

func (l *hostLogger) Log(level hclog.Level, msg string, args ...any) {
	var sl slog.Level
	switch level {
	case hclog.Trace, hclog.Debug, hclog.NoLevel:
		sl = slog.LevelDebug
	case hclog.Info:
		sl = slog.LevelInfo
		if !l.stderr {
			sl = slog.LevelDebug
		}
	case hclog.Warn:
		sl = slog.LevelWarn
	default:
		sl = slog.LevelError
	}
	all := make([]any, 0, len(l.args)+len(args))
	for _, kv := range [][]any{l.args, args} {
		for i := 0; i+1 < len(kv); i += 2 {
			switch kv[i] {
			case "timestamp": // when the plugin logged; landlord's line has its own time
				continue
			case "plugin": // go-plugin's name for the binary; plugin= is the plugin's name
				all = append(all, "path", kv[i+1])
				continue
			}
			all = append(all, kv[i], kv[i+1])
		}
	}
	l.log.Log(context.Background(), sl, msg, all...) // go-plugin gives no context
}

func (l *hostLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l *hostLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l *hostLogger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l *hostLogger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l *hostLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }
func (l *hostLogger) IsTrace() bool                 { return false }
func (l *hostLogger) IsDebug() bool                 { return l.log.Enabled(context.Background(), slog.LevelDebug) }
func (l *hostLogger) IsInfo() bool                  { return l.log.Enabled(context.Background(), slog.LevelInfo) }
func (l *hostLogger) IsWarn() bool                  { return l.log.Enabled(context.Background(), slog.LevelWarn) }
func (l *hostLogger) IsError() bool                 { return true }
func (l *hostLogger) ImpliedArgs() []any            { return l.args }
func (l *hostLogger) Name() string                  { return l.name }
func (l *hostLogger) With(args ...any) hclog.Logger {
	return &hostLogger{log: l.log, name: l.name, args: append(append([]any{}, l.args...), args...), stderr: l.stderr}
}

// Named is the logger of the plugin's stderr (go-plugin names it after the
// binary, which landlord's line says as path=): it keeps the plugin's name
// as plugin=NAME.
func (l *hostLogger) Named(string) hclog.Logger {
	return &hostLogger{log: l.log, name: l.name, args: l.args, stderr: true}
}
func (l *hostLogger) ResetNamed(name string) hclog.Logger { return l.Named(name) }
func (l *hostLogger) SetLevel(hclog.Level)                {}
func (l *hostLogger) GetLevel() hclog.Level {
	if l.IsDebug() {
		return hclog.Debug
	}
	return hclog.Info
}
func (l *hostLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(opts), "", 0)
}
func (l *hostLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		l.Info(strings.TrimSpace(string(p)))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// pluginHCLog is the hclog.Logger go-plugin's serving side writes to, in
// the plugin: JSON lines on stderr, warnings and errors only.
func pluginHCLog(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: w, JSONFormat: true, Level: hclog.Warn, TimeFormat: hclogTime})
}
