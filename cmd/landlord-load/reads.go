package main

import (
	"context"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// readSet collects the latencies of reads.
type readSet struct {
	listFirst, listCursor, getByID, getByName samples
	errs                                      errorCount
}

func (s *readSet) reads(clients int) Reads {
	r := Reads{Clients: clients, ListFirst: s.listFirst.summary(), ListCursor: s.listCursor.summary(),
		GetByID: s.getByID.summary(), GetByName: s.getByName.summary()}
	r.Errors, r.ErrorSamples = s.errs.count()
	return r
}

// readUnderLoad times reads at --load-read-rate until ctx ends, in turn: a
// first page, the next page of a walk through the list, a get by id and one
// by name.
func (l *loader) readUnderLoad(ctx context.Context, s *readSet) {
	if l.opts.loadReadRate <= 0 {
		return
	}
	t := time.NewTicker(time.Duration(float64(time.Second) / l.opts.loadReadRate))
	defer t.Stop()
	var walk string
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch i % 4 {
		case 0:
			var first string
			l.listPage(ctx, s, &first)
		case 1:
			l.listPage(ctx, s, &walk)
		case 2:
			l.get(ctx, s, false)
		case 3:
			l.get(ctx, s, true)
		}
	}
}

// readAtRest times --samples reads of each kind with --read-c clients.
func (l *loader) readAtRest(ctx context.Context) Reads {
	s := &readSet{}
	n, c := l.opts.samples, l.opts.readers
	parallel(ctx, n, c, func(ctx context.Context, _, _ int) {
		var first string
		l.listPage(ctx, s, &first)
	})
	walks := make([]string, c)
	parallel(ctx, n, c, func(ctx context.Context, w, _ int) { l.listPage(ctx, s, &walks[w]) })
	parallel(ctx, n, c, func(ctx context.Context, _, _ int) { l.get(ctx, s, false) })
	parallel(ctx, n, c, func(ctx context.Context, _, _ int) { l.get(ctx, s, true) })
	return s.reads(c)
}

// listPage times one page of every tenant: the first when *token is empty,
// else the page it points to. *token becomes the next page's, empty after
// the last page, so that calls walk the whole list and start again.
func (l *loader) listPage(ctx context.Context, s *readSet, token *string) {
	start := time.Now()
	page, err := l.c.Tenants().List(ctx, client.ListOptions{PageSize: pageSize, PageToken: *token})
	d := time.Since(start)
	if err != nil {
		if ctx.Err() == nil {
			s.errs.add(err)
		}
		*token = ""
		return
	}
	if *token == "" {
		s.listFirst.add(d)
	} else {
		s.listCursor.add(d)
	}
	*token = page.NextPageToken
}

// get times the get of a random tenant of the run, by id or by name.
func (l *loader) get(ctx context.Context, s *readSet, byName bool) {
	t, ok := l.tenants.random()
	if !ok {
		return
	}
	key, dst := t.id, &s.getByID
	if byName {
		key, dst = t.name, &s.getByName
	}
	start := time.Now()
	_, err := l.c.Tenants().Get(ctx, key, client.GetOptions{})
	d := time.Since(start)
	if err != nil {
		if ctx.Err() == nil {
			s.errs.add(err)
		}
		return
	}
	dst.add(d)
}
