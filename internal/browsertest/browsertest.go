package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const (
	// EnvBrowser names the variable that names the browser to run, a path or
	// a name to look up in PATH, in place of the search.
	EnvBrowser = "LANDLORD_CHROMIUM"

	// EnvRequire names the variable that, set to 1, turns "no browser here"
	// skips into failures.
	EnvRequire = "LANDLORD_REQUIRE_BROWSER"

	// EnvScreenshots names the variable that names the directory
	// Browser.Screenshot writes into, in place of the test's temporary
	// directory.
	EnvScreenshots = "LANDLORD_SCREENSHOTS"
)

// names are the browsers looked for in PATH, in order.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// fix tells the reader of a skip how to get a browser.
const fix = "To fix: apt-get install chromium, or set " + EnvBrowser + " to a Chromium or Chrome binary."

// errUnavailable marks "no browser on this machine" rather than "the tests
// are broken": a skip, unless EnvRequire is set.
var errUnavailable = errors.New("no Chromium")

// Config says how to start a browser. The zero Config is the defaults.
type Config struct {
	// Width and Height are the window's size in CSS pixels; 0 means 1280
	// by 800.
	Width, Height int
	// Timeout bounds the browser's life, and so every action in it; 0 means
	// a minute. It never runs past the test binary's -timeout.
	Timeout time.Duration
}

// Browser is a headless Chromium started for one test, and what its page
// has done wrong so far.
type Browser struct {
	t       testing.TB
	ctx     context.Context
	timeout time.Duration

	mu       sync.Mutex
	problems []Problem
	ended    bool // the browser has stopped: no more t.Logf, the test may be over
}

// New starts a browser for t with the default Config; see NewWith.
func New(t testing.TB) *Browser {
	t.Helper()
	return NewWith(t, Config{})
}

// NewWith starts a browser for t, stopped when t ends. It skips or fails t
// when there is no browser (see the package doc). When t ends, NewWith's
// cleanup fails t for every problem of the page that t did not take.
func NewWith(t testing.TB, cfg Config) *Browser {
	t.Helper()
	if cfg.Width == 0 {
		cfg.Width = 1280
	}
	if cfg.Height == 0 {
		cfg.Height = 800
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Minute
	}
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		// Stop a little before go test would panic, so that the failure
		// says which action was waiting.
		if end, ok := d.Deadline(); ok {
			cfg.Timeout = max(min(cfg.Timeout, time.Until(end)-5*time.Second), time.Second)
		}
	}

	path, err := find(os.Getenv, exec.LookPath)
	if err != nil {
		report(t, os.Getenv, err)
		return nil
	}

	b := &Browser{t: t, timeout: cfg.Timeout}
	var output tailBuffer
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(cfg.Width, cfg.Height),
		// Screenshots show the page, not the scroll bars of one platform.
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.CombinedOutput(&output),
	)
	if os.Geteuid() == 0 {
		// Chromium's sandbox refuses to run as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	life, stopLife := context.WithTimeout(context.Background(), cfg.Timeout)
	allocCtx, stopAlloc := chromedp.NewExecAllocator(life, opts...)
	ctx, stopCtx := chromedp.NewContext(allocCtx,
		chromedp.WithListener(b.collect),
		chromedp.WithErrorf(b.logf),
	)
	b.ctx = ctx
	t.Cleanup(func() {
		// A graceful close, bounded, then the process is gone before
		// t.TempDir removes the profile (its cleanup was registered first,
		// so it runs after this one).
		closing, stop := context.WithTimeout(ctx, 10*time.Second)
		_ = chromedp.Cancel(closing)
		stop()
		stopCtx()
		stopAlloc()
		stopLife()
		b.mu.Lock()
		b.ended = true
		b.mu.Unlock()
	})
	// Registered last, so it runs first, while the browser still runs.
	t.Cleanup(b.check)

	// Start the browser now, so that a browser that cannot start skips
	// here, and the tab's listener is in place before the first action.
	if err := chromedp.Do(ctx); err != nil {
		err = fmt.Errorf("%w: %s would not start: %w%s", errUnavailable, path, err, output.quote())
		report(t, os.Getenv, err)
		return nil
	}
	return b
}

// Context returns the browser's chromedp context, for chromedp.Run and
// chromedp.Do. It ends when the test ends or the Config.Timeout runs out.
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs steps in the browser's tab, in order, and fails the test at the
// first that fails.
func (b *Browser) Do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		if errors.Is(b.ctx.Err(), context.DeadlineExceeded) {
			b.t.Fatalf("browser: %v (the browser's %s timeout ran out)", err, b.timeout)
		}
		b.t.Fatalf("browser: %v", err)
	}
}

// logf reports chromedp's own errors in the test's log, while the test runs.
func (b *Browser) logf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.ended {
		b.t.Logf("chromedp: "+format, args...)
	}
}

// find returns the path of the browser to run: EnvBrowser's, read through
// getenv, else the first of names that lookPath finds. No browser wraps
// errUnavailable; an EnvBrowser that names no program does not.
func find(getenv func(string) string, lookPath func(string) (string, error)) (string, error) {
	if name := getenv(EnvBrowser); name != "" {
		path, err := lookPath(name)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBrowser, name, err)
		}
		return path, nil
	}
	for _, name := range names {
		if path, err := lookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("%w: none of %s in PATH", errUnavailable, strings.Join(names, ", "))
}

// report skips or fails t for err, which kept it from getting a browser.
func report(t testing.TB, getenv func(string) string, err error) {
	t.Helper()
	if !errors.Is(err, errUnavailable) {
		t.Fatalf("browsertest: %v", err)
		return
	}
	v := getenv(EnvRequire)
	required, perr := strconv.ParseBool(v)
	switch {
	case v == "":
		t.Skipf("browsertest: %v.\n%s\n(%s=1 makes this a failure.)", err, fix, EnvRequire)
	case perr != nil:
		// A CI typo must not quietly turn failures back into skips.
		t.Fatalf("browsertest: %v.\n%s\n%s=%q is not a boolean (want 1 or 0).", err, fix, EnvRequire, v)
	case required:
		t.Fatalf("browsertest: %v.\n%s\n%s is set, which makes this a failure rather than a skip.", err, fix, EnvRequire)
	default:
		t.Skipf("browsertest: %v.\n%s", err, fix)
	}
}

// tailBuffer keeps the last lines the browser wrote, for a failure to
// start to quote; Chromium's usual D-Bus complaints are among them.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

const tailMax = 4 << 10

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > 2*tailMax {
		w.b = append(w.b[:0], w.b[len(w.b)-tailMax:]...)
	}
	return len(p), nil
}

// quote returns the tail as lines to append to an error, or nothing.
func (w *tailBuffer) quote() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.TrimSpace(string(w.b[max(0, len(w.b)-tailMax):]))
	if s == "" {
		return ""
	}
	return "\nthe browser's output ends:\n" + s
}
