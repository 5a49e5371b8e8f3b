package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jaxxstorm/landlord/client"
)

// screen is what a terminal of a given width shows after some output: it
// knows carriage return, newline, erase to the end of the line (ESC [K),
// cursor up (ESC [nA), erase to the end of the screen (ESC [J) and wraps at
// the last column, as terminals do.
type screen struct {
	width    int
	rows     [][]rune
	row, col int
}

func newScreen(width int) *screen { return &screen{width: width, rows: [][]rune{nil}} }

func (s *screen) write(out string) {
	for i := 0; i < len(out); {
		if m := csi.FindStringSubmatch(out[i:]); m != nil {
			n, _ := strconv.Atoi(m[1])
			switch m[2] {
			case "K":
				s.rows[s.row] = s.rows[s.row][:min(s.col, len(s.rows[s.row]))]
			case "J":
				s.rows[s.row] = s.rows[s.row][:min(s.col, len(s.rows[s.row]))]
				s.rows = s.rows[:s.row+1]
			case "A":
				s.row = max(0, s.row-max(n, 1))
			default:
				panic("screen: unknown escape sequence " + strconv.Quote(m[0]))
			}
			i += len(m[0])
			continue
		}
		r, size := utf8.DecodeRuneInString(out[i:])
		i += size
		switch r {
		case '\r':
			s.col = 0
		case '\n':
			s.newline()
		default:
			w := runeWidth(r)
			if s.col+w > s.width {
				s.newline()
			}
			line := s.rows[s.row]
			for len(line) < s.col {
				line = append(line, ' ')
			}
			line = append(line[:s.col], r)
			if w == 2 {
				line = append(line, 0) // the second column of a wide rune
			}
			s.rows[s.row] = line
			s.col += w
		}
	}
}

// csi matches the escape sequences screen knows, and any other, which it
// refuses.
var csi = regexp.MustCompile(`^\x1b\[(\d*)([A-Za-z])`)

func (s *screen) newline() {
	s.row, s.col = s.row+1, 0
	if s.row == len(s.rows) {
		s.rows = append(s.rows, nil)
	}
}

// lines are the screen's rows that hold something.
func (s *screen) lines() []string {
	var out []string
	for _, r := range s.rows {
		if l := strings.ReplaceAll(string(r), "\x00", ""); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// A tenant retrying a pull, as the controller words it: the cause first.
var retrying = client.Tenant{
	Name: "acme", Status: client.StatusProvisioning, Attempts: 3, Version: 7,
	StatusMessage: "docker: tenant 01a211c2-620a-7b66-a23c-b51a027a7290: image of container app: provisioning failed: " +
		"the engine cannot resolve or reach the registry docker.io of nginx:1.27-alpine (provision attempt 3 of 11 failed; retrying in 4.1s)",
}

// On an 80-column terminal the progress line is one line, rewritten in
// place: it never wraps, however long the message, so no line is left
// behind at each rewrite; it is cut with an ellipsis, keeping the status
// and what comes first in the message.
func TestProgressFitsTheTerminal(t *testing.T) {
	for _, width := range []int{80, 40, 120} {
		var out bytes.Buffer
		p := newProgress(&out, true, width)
		for i := range 5 {
			tn := retrying
			tn.Attempts, tn.Version = i+1, int64(i+2)
			tn.StatusMessage = strings.Replace(tn.StatusMessage, "attempt 3", "attempt "+string(rune('1'+i)), 1)
			p.show(tn)
			p.mu.Lock()
			p.redraw() // as the ticker does every second
			p.mu.Unlock()
		}
		p.stop()
		s := newScreen(width)
		s.write(out.String())
		lines := s.lines()
		if len(lines) != 1 {
			t.Fatalf("width %d: %d lines on the screen, want the one progress line:\n%s", width, len(lines), strings.Join(lines, "\n"))
		}
		line := lines[0]
		if n := len([]rune(line)); n > width-1 {
			t.Errorf("width %d: the line takes %d columns", width, n)
		}
		if !strings.HasPrefix(line, "[0s] acme: provisioning: docker: ") || !strings.HasSuffix(line, "…") {
			t.Errorf("width %d: line %q", width, line)
		}
	}
}

// Without a terminal, a line is written when the tenant changes and only
// then, each whole.
func TestProgressWithoutTerminal(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false, 0)
	p.show(retrying)
	same := retrying
	same.Version++ // nothing shown changed
	p.show(same)
	next := retrying
	next.StatusMessage = "pulling image nginx:1.27-alpine"
	p.show(next)
	p.stop()
	want := "acme: provisioning: " + retrying.StatusMessage + "\nacme: provisioning: pulling image nginx:1.27-alpine\n"
	if out.String() != want {
		t.Errorf("progress:\n%q\nwant:\n%q", out.String(), want)
	}
}

func TestFit(t *testing.T) {
	for _, tt := range []struct {
		in   string
		cols int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"one too long", 11, "one too lo…"},
		{"line\nbreaks  and\tspaces", 40, "line breaks and spaces"},
		{"名前は長い", 7, "名前は…"},
		{"名前は長い", 10, "名前は長い"},
		{"abc", 1, "…"},
	} {
		if got := fit(tt.in, tt.cols); got != tt.want {
			t.Errorf("fit(%q, %d) = %q, want %q", tt.in, tt.cols, got, tt.want)
		}
	}
}
