package provider

import (
	"context"
	"fmt"
)

type progressKey struct{}

// WithProgress returns a context whose long provider operations report their
// progress ("pulling image nginx:1.27: 12 of 27 MB") to fn. The caller owns
// fn: it may record the message as the tenant's status message, throttled as
// it sees fit, and must not block for long. Progress is informational only;
// nothing needed to finish an operation may depend on it.
func WithProgress(ctx context.Context, fn func(message string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress hands a progress message to the function installed with
// WithProgress, if any. Providers call it during steps that take long (image
// pulls, rollouts); messages must not contain secrets.
func ReportProgress(ctx context.Context, format string, args ...any) {
	fn, ok := ctx.Value(progressKey{}).(func(string))
	if !ok || fn == nil {
		return
	}
	fn(fmt.Sprintf(format, args...))
}
