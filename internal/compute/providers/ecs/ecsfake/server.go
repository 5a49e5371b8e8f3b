package ecsfake

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
)

// Options configures a fake. The zero value is usable: every field has the
// default its comment gives.
type Options struct {
	// Region is the region in ARNs and the one requests must be signed
	// for. Default us-west-2.
	Region string
	// Account is the account id in ARNs. Default 123456789012.
	Account string
	// Clusters are the names of the clusters that exist. Default
	// ["landlord"]. ECS's implicit "default" cluster exists only if listed.
	Clusters []string

	// Now is the clock the fake's tasks advance by. Default time.Now, so a
	// fake served to another process progresses with wall time.
	Now func() time.Time
	// Clock, when set, is a manual clock the fake reads and Server.Advance
	// moves. Set Now or Clock, not both.
	Clock *ManualClock

	// StepTime is how long a task spends in each of PROVISIONING and
	// PENDING before the next state. Default 100ms.
	StepTime time.Duration
	// DrainTime is how long a deleted service stays DRAINING before it is
	// INACTIVE. Default 2s.
	DrainTime time.Duration
	// InactiveRetention is how long an INACTIVE service can still be
	// described before it is forgotten. Default 1h.
	InactiveRetention time.Duration
	// CreateLag is how many DescribeServices calls naming a just-created
	// service report it MISSING, as ECS's eventual consistency can.
	// Default 0.
	CreateLag int
	// Latency is added to every request before it is handled. Default 0.
	Latency time.Duration

	// Throttling, when set, refuses requests beyond ECS's request rates
	// with ThrottlingException "Rate exceeded", HTTP 400, as ECS does: each
	// operation draws a token from its category's bucket, refilled from
	// the fake's clock (see throttle.go). DocumentedRates is ECS's own
	// table. Default nil: no throttling.
	Throttling Rates
}

func (o Options) withDefaults() Options {
	if o.Region == "" {
		o.Region = "us-west-2"
	}
	if o.Account == "" {
		o.Account = "123456789012"
	}
	if o.Clusters == nil {
		o.Clusters = []string{"landlord"}
	}
	if o.Now != nil && o.Clock != nil {
		panic("ecsfake: set Options.Now or Options.Clock, not both")
	}
	if o.Clock != nil {
		o.Now = o.Clock.Now
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.StepTime <= 0 {
		o.StepTime = 100 * time.Millisecond
	}
	if o.DrainTime <= 0 {
		o.DrainTime = 2 * time.Second
	}
	if o.InactiveRetention <= 0 {
		o.InactiveRetention = time.Hour
	}
	return o
}

// Server is a fake ECS endpoint. It speaks the wire protocol the real SDK
// client speaks and keeps clusters, services, task definitions and tasks in
// memory. It is safe for concurrent use.
type Server struct {
	// URL is the base URL of a server made by Start. New leaves it empty:
	// its caller serves Handler where it likes and sets URL if it wants
	// Client to work.
	URL string
	// Region is the region the fake answers for.
	Region string
	// Account is the account id in the fake's ARNs.
	Account string

	opts Options

	mu         sync.Mutex
	at         time.Time // the time the state has been advanced to
	clusters   map[string]*cluster
	families   map[string][]*taskDef
	failImages map[string]string
	faults     []fault
	malformed  []fault // pending MalformNext answers; code unused
	calls      map[string]int
	ipSeq      int
	buckets    map[string]*tokenBucket // by operation; nil without Options.Throttling
	throttled  map[string]int
}

// New returns a fake that is not yet serving; serve Handler to use it.
func New(opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{
		Region:     opts.Region,
		Account:    opts.Account,
		opts:       opts,
		clusters:   map[string]*cluster{},
		families:   map[string][]*taskDef{},
		failImages: map[string]string{},
		calls:      map[string]int{},
		throttled:  map[string]int{},
	}
	for _, name := range opts.Clusters {
		s.clusters[name] = &cluster{name: name, arn: s.ClusterARN(name)}
	}
	s.at = s.now()
	s.buckets = newBuckets(opts.Throttling, s.at)
	return s
}

// Start returns a fake served by an httptest.Server that t closes when the
// test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// Handler returns the fake's HTTP handler, for serving it on an address of
// the caller's choosing.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

// ClusterARN returns the ARN ECS gives the named cluster.
func (s *Server) ClusterARN(name string) string {
	return s.arn("cluster/" + name)
}

func (s *Server) arn(resource string) string {
	return "arn:aws:ecs:" + s.Region + ":" + s.Account + ":" + resource
}

func (s *Server) now() time.Time {
	return s.opts.Now().UTC().Truncate(time.Millisecond)
}

// Client returns a real SDK client for the fake: static credentials, the
// fake's region, and the SDK's standard retryer with a backoff short enough
// for tests. ctx is accepted for symmetry with config.LoadDefaultConfig; the
// client is built without reading the environment or shared config files so
// tests do not depend on the machine they run on.
func (s *Server) Client(ctx context.Context) *ecs.Client {
	_ = ctx
	cfg := aws.Config{
		Region: s.Region,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDFAKE", SecretAccessKey: "secret", Source: "ecsfake"}, nil
		}),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxBackoff = 20 * time.Millisecond
			})
		},
	}
	return ecs.NewFromConfig(cfg, func(o *ecs.Options) {
		o.BaseEndpoint = aws.String(s.URL)
	})
}
