package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Polling intervals of Wait: it starts at pollMin after each change and
// slows down to pollMax while nothing changes.
const (
	pollMin = 250 * time.Millisecond
	pollMax = time.Second
)

// Wait polls a tenant until done reports true, done returns an error, or ctx
// ends; it returns the tenant it saw last. onChange, when not nil, is called
// with the first state read and with every change after it.
//
// The first read finds the tenant by id or name; later reads follow that
// tenant by id, deleted or not, so that a new tenant of the same name is
// never mistaken for it. Once the tenant was read, failures to reach the API
// and 502, 503 and 504 answers are retried until ctx ends; other API errors
// end the wait (a tenant deleted for good is a 404 *Error). When ctx ends
// the error wraps ctx.Err() (context.DeadlineExceeded for a timeout).
func (s *Tenants) Wait(ctx context.Context, idOrName string, done func(Tenant) (bool, error), onChange func(Tenant)) (*Tenant, error) {
	var last *Tenant
	interval := pollMin
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return last, waitTimeout(ctx, idOrName, last)
		case <-timer.C:
		}
		id, opts := idOrName, GetOptions{}
		if last != nil {
			id, opts = last.ID, GetOptions{IncludeDeleted: true}
		}
		t, err := s.Get(ctx, id, opts)
		switch {
		case ctx.Err() != nil:
			return last, waitTimeout(ctx, idOrName, last)
		case err != nil && last != nil && transient(err):
			interval = min(interval*3/2, pollMax)
			timer.Reset(interval)
			continue
		case err != nil:
			return last, err
		}
		if last == nil || changed(*last, *t) {
			interval = pollMin
			if onChange != nil {
				onChange(*t)
			}
		} else {
			interval = min(interval*3/2, pollMax)
		}
		last = t
		ok, err := done(*t)
		if err != nil || ok {
			return last, err
		}
		timer.Reset(interval)
	}
}

func waitTimeout(ctx context.Context, idOrName string, last *Tenant) error {
	if last == nil {
		return fmt.Errorf("client: wait for tenant %s: %w", idOrName, ctx.Err())
	}
	return fmt.Errorf("client: wait for tenant %s: still %s: %w", idOrName, describe(*last), ctx.Err())
}

// describe is a tenant's status, attempt and message in a few words.
func describe(t Tenant) string {
	s := t.Status
	if t.Attempts > 0 {
		s += fmt.Sprintf(" (attempt %d)", t.Attempts)
	}
	if t.StatusMessage != "" {
		s += ": " + t.StatusMessage
	}
	return s
}

// changed reports whether anything a waiter watches changed.
func changed(a, b Tenant) bool {
	return a.Version != b.Version || a.Status != b.Status || a.StatusMessage != b.StatusMessage ||
		a.Attempts != b.Attempts || a.ObservedGeneration != b.ObservedGeneration
}

// transient reports errors worth polling through: the API could not be
// reached, or a proxy or the server said it is unavailable for now.
func transient(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return true
	}
	switch e.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// settled reports whether the controller has acted on the tenant's latest
// desired state.
func settled(t Tenant) bool { return t.ObservedGeneration >= t.Generation }

// UntilReady is a condition for Wait: done when the tenant is ready at its
// latest generation. A tenant that fails at its latest generation is a
// *TenantFailedError; one being deleted is an error too.
func UntilReady(t Tenant) (bool, error) {
	switch {
	case t.Status == StatusDeleting || t.Status == StatusDeleted:
		return false, fmt.Errorf("client: tenant %s is %s and will not become ready", t.Name, t.Status)
	case !settled(t):
		return false, nil
	case t.Status == StatusFailed:
		return false, &TenantFailedError{Tenant: t}
	}
	return t.Status == StatusReady, nil
}

// UntilDeleted is a condition for Wait: done when the tenant is deleted. A
// deletion that fails is a *TenantFailedError. Wait returns a 404 *Error
// when the deleted tenant is gone from the store too.
func UntilDeleted(t Tenant) (bool, error) {
	switch {
	case t.Status == StatusDeleted:
		return true, nil
	case t.Status == StatusFailed && settled(t):
		return false, &TenantFailedError{Tenant: t}
	}
	return false, nil
}
