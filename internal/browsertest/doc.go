// Package browsertest drives a real headless Chromium from tests, for the
// web console: a test gets a fresh browser, runs chromedp actions in it, and
// fails when the page misbehaves in ways a person at the browser would only
// see in the developer tools.
//
//	func TestConsole(t *testing.T) {
//		b := browsertest.New(t)
//		b.Do(chromedp.Navigate(srv.URL), chromedp.Click("#refresh"))
//		got, err := chromedp.Run(b.Context(), chromedp.Text("#status"))
//		…
//		b.Screenshot(390, 844, "console-phone.png")
//	}
//
// # Where the browser comes from
//
// New starts the program that LANDLORD_CHROMIUM names (a path, or a name to
// look up in PATH), else the first of chromium, chromium-browser,
// google-chrome and google-chrome-stable found in PATH (Debian: apt-get
// install chromium). Each test has its own browser, headless, with a new
// profile in a temporary directory, the GPU off, no first-run pages, and,
// as root, which Chromium's sandbox refuses, no sandbox. Starting one takes
// about half a second. The browser, and so every action in it, stops after
// Config.Timeout, so that a page that never shows what a test waits for
// fails that test instead of hanging until go test's own timeout.
//
// # Skips
//
// When there is no browser, or it does not start, New skips the test with
// the reason and how to fix it; CI sets LANDLORD_REQUIRE_BROWSER=1 to turn
// those skips into failures. A LANDLORD_CHROMIUM that names no program is
// always a failure: someone asked for it.
//
// # What fails a test
//
// While the test runs, Browser collects the page's problems: uncaught
// JavaScript exceptions, console.error and console.assert calls, a crash of
// the page, and the browser's own log entries of level error or of the
// security source. The log is where Chromium reports resources that failed
// to load (a 404, but not one for /favicon.ico, which the browser asks for
// by itself) and what the Content-Security-Policy blocked, or would block
// when it is report-only ("Executing inline script violates the following
// Content Security Policy directive …", also for inline event handlers,
// style attributes and other origins). The console is served with a strict
// policy, so a violation is a bug: an inline handler or style that does
// nothing in the browser. When the test ends,
// any problem it has not taken with Browser.Take fails it, each listed with
// where it came from. A test that expects a problem takes it and checks it.
//
// # Screenshots
//
// Screenshot sets the viewport to a size (390 pixels wide is a phone) and
// writes a PNG of the whole page. Browser.Screenshot writes it into the
// directory LANDLORD_SCREENSHOTS names, which is how the pictures in docs/
// are made (LANDLORD_SCREENSHOTS=$PWD/docs/screenshots go test -run …), and
// otherwise into the test's temporary directory, where it is removed with
// it: the screenshot is still taken, so it is tested either way.
package browsertest
