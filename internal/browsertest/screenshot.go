package browsertest

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Screenshot sets the viewport of the tab in ctx to width by height CSS
// pixels, as Chrome's device toolbar does (390 wide is a phone), and writes
// a PNG of the whole page to path: width pixels wide, and as tall as the
// page, at least height. The viewport stays at that size afterwards, so a
// test can go on at the phone's width.
//
// The emulated device is not a mobile one: the page is laid out at width
// whether or not it has a viewport meta tag.
func Screenshot(ctx context.Context, width, height int, path string) error {
	if width <= 0 || height <= 0 {
		return fmt.Errorf("screenshot: size %dx%d: want both above 0", width, height)
	}
	png, err := chromedp.Run(ctx, fullPage(width, height))
	if err != nil {
		return fmt.Errorf("screenshot %dx%d: %w", width, height, err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	return nil
}

// fullPage sets the viewport and captures the page at it, beyond the
// viewport's height.
func fullPage(width, height int) chromedp.Action[[]byte] {
	return func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		if _, err := chromedp.EmulateViewport(int64(width), int64(height))(ctx, t); err != nil {
			return nil, err
		}
		m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		h := float64(height)
		if m.CSSContentSize != nil {
			h = max(h, math.Ceil(m.CSSContentSize.Height))
		}
		r, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:                page.CaptureScreenshotFormatPng,
			Clip:                  &page.Viewport{Width: float64(width), Height: h, Scale: 1},
			FromSurface:           new(true),
			CaptureBeyondViewport: new(true),
		})
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	}
}

// Screenshot is the package's Screenshot in the browser's tab, written to
// name in the directory EnvScreenshots names, else in a temporary directory
// of the test. It fails the test when it cannot, and returns the path.
func (b *Browser) Screenshot(width, height int, name string) string {
	b.t.Helper()
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		dir = b.t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := Screenshot(b.ctx, width, height, path); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
	return path
}
