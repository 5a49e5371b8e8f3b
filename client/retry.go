package client

import (
	"context"
	"encoding/json"
	"time"
)

// Retry asks for another attempt at a tenant (one that failed, or waits
// for its next attempt) with the desired state it has: a merge patch
// setting RetryAnnotation to the time, as the console's Retry does. It
// returns the tenant at its next generation. A tenant whose deletion was
// asked for cannot be changed (a 409 *Error): Delete retries a deletion
// that failed.
func (s *Tenants) Retry(ctx context.Context, idOrName string, opts UpdateOptions) (*Tenant, error) {
	patch, err := json.Marshal(map[string]any{"annotations": map[string]string{RetryAnnotation: time.Now().UTC().Format(time.RFC3339Nano)}})
	if err != nil {
		return nil, err
	}
	return s.Patch(ctx, idOrName, patch, opts)
}
