package main

import (
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
	"golang.org/x/text/width"
)

// stderrIsTerminal is whether progress may rewrite its line; tests set it.
var stderrIsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is the width in columns of the terminal w writes to; 0
// when it cannot tell. Tests set it.
var terminalWidth = func(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}

// defaultWidth is the width assumed for a terminal that does not say.
const defaultWidth = 80

// liveOutput is what the progress shown while waiting for a tenant
// (progress) and while watching a rollout (rolloutProgress) share: where
// it is written, whether that is a terminal and how wide, when it began,
// and, on a terminal, a ticker that redraws it every second so that the
// elapsed time keeps moving while nothing changes.
type liveOutput struct {
	w        io.Writer
	terminal bool
	width    int // the terminal's columns; defaultWidth when it does not say
	start    time.Time

	mu   sync.Mutex // guards what is drawn, and is held while drawing
	done chan struct{}
	wg   sync.WaitGroup
}

// open starts o writing to w. On a terminal it calls redraw, with mu
// held, every second until stop.
func (o *liveOutput) open(w io.Writer, terminal bool, width int, redraw func()) {
	if width <= 0 {
		width = defaultWidth
	}
	o.w, o.terminal, o.width, o.start, o.done = w, terminal, width, time.Now(), make(chan struct{})
	if !terminal {
		return
	}
	o.wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-o.done:
				return
			case <-tick.C:
				o.mu.Lock()
				redraw()
				o.mu.Unlock()
			}
		}
	})
}

// elapsed is the time since o opened, in whole seconds.
func (o *liveOutput) elapsed() time.Duration {
	return time.Since(o.start).Truncate(time.Second)
}

// stop stops the ticker, once a redraw under way has ended.
func (o *liveOutput) stop() {
	close(o.done)
	o.wg.Wait()
}

// cutFor returns how a table written to w shows its free text (a
// message, a description): on one line, and, when w is a terminal, cut past
// n columns, ending in an ellipsis, so that a row stays on one line of the
// screen. Written anywhere else (a file, a pipe) it is whole: grep, a file
// or a pager then has every word, and nothing is lost without a sign.
func cutFor(w io.Writer) func(s string, n int) string {
	if i, ok := w.(*indented); ok {
		w = i.w
	}
	if terminalWidth(w) > 0 {
		return fit
	}
	return func(s string, _ int) string { return strings.Join(strings.Fields(s), " ") }
}

// fit is s on one line of at most cols terminal columns, cut with an
// ellipsis when longer. Wide characters (CJK, most emoji) take two columns.
func fit(s string, cols int) string {
	s = strings.Join(strings.Fields(s), " ")
	used := 0
	for _, r := range s {
		used += runeWidth(r)
	}
	if used <= cols {
		return s
	}
	var b strings.Builder
	used = 0
	for _, r := range s {
		w := runeWidth(r)
		if used+w > cols-1 { // a column for the ellipsis
			break
		}
		b.WriteRune(r)
		used += w
	}
	return b.String() + "…"
}

// runeWidth is the columns r takes on a terminal.
func runeWidth(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}
