package docker

import (
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/api/types/jsonstream"
)

// pullProgressEvery is the shortest interval between two progress reports
// of one pull.
const pullProgressEvery = time.Second

// pullProgress sums the Engine's per-layer pull messages into one line.
type pullProgress struct {
	image  string
	last   time.Time
	order  []string
	layers map[string]*layerProgress
}

type layerProgress struct {
	current, total int64
	done           bool
}

func newPullProgress(image string, start time.Time) *pullProgress {
	return &pullProgress{image: image, last: start, layers: map[string]*layerProgress{}}
}

// observe records one message of the stream and returns the line to report
// when one is due.
func (p *pullProgress) observe(m jsonstream.Message, now time.Time) (string, bool) {
	// Messages without an id are about the whole image ("Digest: …");
	// "Pulling from <repo>" carries the tag as its id.
	if m.ID == "" || strings.HasPrefix(m.Status, "Pulling from") {
		return "", false
	}
	l := p.layers[m.ID]
	if l == nil {
		l = &layerProgress{}
		p.layers[m.ID] = l
		p.order = append(p.order, m.ID)
	}
	switch m.Status {
	case "Downloading":
		if m.Progress != nil {
			l.current, l.total = m.Progress.Current, m.Progress.Total
		}
	case "Download complete", "Verifying Checksum", "Extracting":
		l.current = max(l.current, l.total)
	case "Pull complete", "Already exists":
		l.current = max(l.current, l.total)
		l.done = true
	}
	if now.Sub(p.last) < pullProgressEvery {
		return "", false
	}
	p.last = now
	return p.line(), true
}

// line is "pulling image <ref>: 12.3 of 27.1 MB (3 of 5 layers)"; the total
// counts the layers whose size the Engine has told so far.
func (p *pullProgress) line() string {
	var current, total int64
	done := 0
	for _, id := range p.order {
		l := p.layers[id]
		current += l.current
		total += l.total
		if l.done {
			done++
		}
	}
	if total == 0 {
		return fmt.Sprintf("pulling image %s (%d of %d layers)", p.image, done, len(p.order))
	}
	return fmt.Sprintf("pulling image %s: %.1f of %.1f MB (%d of %d layers)", p.image, float64(current)/1e6, float64(total)/1e6, done, len(p.order))
}
