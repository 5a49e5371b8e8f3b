package ecs

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/logging"
)

// clients makes one ECS client per region, endpoint and role, on first use,
// and keeps it: an SDK client is safe for concurrent use, and keeping it
// keeps its connections and its cached (assumed-role) credentials.
type clients struct {
	credentials aws.CredentialsProvider
	httpClient  aws.HTTPClient

	mu   sync.Mutex
	byID map[clientKey]*ecs.Client
}

type clientKey struct {
	region, endpoint        string
	role, external, session string
}

func newClients(creds aws.CredentialsProvider, hc aws.HTTPClient) *clients {
	return &clients{credentials: creds, httpClient: hc, byID: map[clientKey]*ecs.Client{}}
}

// ecs returns the client for pl. Loading the SDK's configuration reads the
// environment and shared files; it does not call AWS.
func (c *clients) ecs(ctx context.Context, pl placement) (*ecs.Client, error) {
	key := clientKey{region: pl.region, endpoint: pl.endpoint}
	if r := pl.role; r != nil {
		key.role, key.external, key.session = r.RoleARN, r.ExternalID, r.SessionName
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.byID[key]; ok {
		return client, nil
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(pl.region),
		// Adaptive: standard retries of throttling and 5xx, plus a client-side
		// rate limit that backs off when ECS throttles.
		config.WithRetryMode(aws.RetryModeAdaptive),
		// The SDK's own log lines carry no tenant id; what goes wrong reaches
		// the caller as an error instead.
		config.WithLogger(logging.Nop{}),
	}
	if c.credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(c.credentials))
	}
	if c.httpClient != nil {
		opts = append(opts, config.WithHTTPClient(c.httpClient))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("ecs: load AWS configuration for %s: %w", pl.region, err)
	}
	if r := pl.role; r != nil {
		role := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), r.RoleARN, func(o *stscreds.AssumeRoleOptions) {
			if r.ExternalID != "" {
				o.ExternalID = aws.String(r.ExternalID)
			}
			o.RoleSessionName = r.SessionName
			if o.RoleSessionName == "" {
				o.RoleSessionName = "landlord"
			}
		})
		cfg.Credentials = aws.NewCredentialsCache(role)
	}
	client := ecs.NewFromConfig(cfg, func(o *ecs.Options) {
		if pl.endpoint != "" {
			o.BaseEndpoint = aws.String(pl.endpoint)
		}
	})
	c.byID[key] = client
	return client, nil
}
