package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/jaxxstorm/landlord/sdk/plugin/pluginpb"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Config is what landlord hands a plugin when it starts it.
type Config struct {
	// Settings is the plugin's block of landlord's configuration (its
	// "settings"), as JSON; nil when there is none. A provider reads its
	// own settings and its tenants' defaults from it, as an in-tree
	// provider reads its block (workload.SplitBlock).
	Settings json.RawMessage
	// HashKey is the install's secret key, for provider.Fingerprint and
	// provider.CheckHashKey.
	HashKey []byte
	// LandlordVersion is the version of the landlord that started the
	// plugin.
	LandlordVersion string
	// Logger writes to landlord's log: each line appears there with the
	// plugin's name. Never log a secret.
	Logger *slog.Logger
}

// Factory builds the plugin's provider from its Config. An error that
// wraps provider.ErrInvalidSpec with violations (of the settings, with
// pointers into them) is shown to the operator as such.
type Factory func(ctx context.Context, c Config) (provider.Provider, error)

// Serve serves the provider that newProvider builds, as a plugin, until
// landlord stops the plugin; it never returns. A binary that calls it is
// started by landlord, never by hand.
func Serve(newProvider Factory) {
	logger := slog.New(stderrHandler(os.Stderr, slog.LevelDebug))
	slog.SetDefault(logger)
	go exitWhenOrphaned(logger)
	ops := newOperations()
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  handshake,
		VersionedPlugins: pluginSets(&server{factory: newProvider, logger: logger, ops: ops}),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.ChainUnaryInterceptor(recovered(logger), ops.interceptor))...)
		},
		Logger: pluginHCLog(os.Stderr),
	})
}

// recovered turns a panic of the provider in a call into that call's
// error, terminal (the same call would panic again), so that one tenant's
// bad input does not take every tenant's provider down with the process.
func recovered(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handle grpc.UnaryHandler) (res any, err error) {
		defer func() {
			if v := recover(); v != nil {
				log.Error("the provider panicked", slog.String("call", info.FullMethod), slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
				err = toStatus(provider.Terminal(fmt.Errorf("the provider panicked in %s: %v", info.FullMethod, v)))
			}
		}()
		return handle(ctx, req)
	}
}

// orphanPoll is how often a plugin looks whether landlord, its parent, is
// still there.
const orphanPoll = time.Second

// exitWhenOrphaned ends the plugin when landlord is gone (killed, say,
// with no chance to stop it): a plugin left running would go on acting
// for a landlord that is no more, beside the one that replaces it.
func exitWhenOrphaned(log *slog.Logger) {
	parent := os.Getppid()
	for range time.Tick(orphanPoll) {
		if os.Getppid() != parent {
			log.Warn("landlord, which started this plugin, is gone: exiting")
			os.Exit(1)
		}
	}
}

// server is the plugin's side of the protocol: each call is the provider's
// method of the same name.
type server struct {
	pluginpb.UnimplementedProviderServer
	factory Factory
	logger  *slog.Logger
	ops     *operations

	mu sync.RWMutex
	p  provider.Provider
}

func (s *server) Configure(ctx context.Context, req *pluginpb.ConfigureRequest) (*pluginpb.ConfigureResponse, error) {
	var settings json.RawMessage
	if len(req.Settings) > 0 && string(req.Settings) != "null" {
		settings = json.RawMessage(req.Settings)
	}
	p, err := s.factory(ctx, Config{Settings: settings, HashKey: req.HashKey, LandlordVersion: req.LandlordVersion, Logger: s.logger})
	if err != nil {
		return nil, toStatus(err)
	}
	if p == nil {
		return nil, status.Error(codes.Internal, "the plugin's factory returned no provider")
	}
	s.mu.Lock()
	s.p = p
	s.mu.Unlock()
	return &pluginpb.ConfigureResponse{}, nil
}

// provider is the configured provider, or the error of a call before
// Configure.
func (s *server) provider() (provider.Provider, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return nil, status.Error(codes.FailedPrecondition, "the plugin is not configured: landlord calls Configure first")
	}
	return s.p, nil
}

func (s *server) Describe(context.Context, *pluginpb.DescribeRequest) (*pluginpb.DescribeResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	out := &pluginpb.DescribeResponse{Name: p.Name(), ConfigSchema: p.ConfigSchema(), ConfigDefaults: p.ConfigDefaults()}
	if r, ok := p.(provider.CapabilityReporter); ok {
		out.Capabilities = capsMsg(r.Capabilities())
	}
	_, out.HealthChecker = p.(provider.HealthChecker)
	_, out.ConfigDecoder = p.(provider.ConfigDecoder)
	_, out.ChangeNotifier = p.(provider.ChangeNotifier)
	_, out.DriftDetector = p.(provider.DriftDetector)
	_, out.Locator = p.(provider.Locator)
	return out, nil
}

func (s *server) CheckConfig(_ context.Context, req *pluginpb.CheckConfigRequest) (*pluginpb.Empty, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	d, ok := p.(provider.ConfigDecoder)
	if !ok || req.Spec == nil {
		return empty(p.ValidateConfig(req.Config))
	}
	spec, err := baseSpecOf(req.Spec)
	if err == nil {
		err = d.DecodeConfig(req.Config, spec)
	}
	return empty(err)
}

// spec is the provider and the spec of a call.
func (s *server) spec(m *pluginpb.Spec) (provider.Provider, *provider.TenantComputeSpec, error) {
	p, err := s.provider()
	if err != nil {
		return nil, nil, err
	}
	spec, err := specOf(p, m)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	return p, spec, nil
}

func (s *server) Validate(ctx context.Context, req *pluginpb.SpecRequest) (*pluginpb.Empty, error) {
	p, spec, err := s.spec(req.Spec)
	if err != nil {
		return nil, err
	}
	return empty(p.Validate(ctx, spec))
}

func (s *server) Provision(ctx context.Context, req *pluginpb.SpecRequest) (*pluginpb.ProvisionResult, error) {
	p, spec, err := s.spec(req.Spec)
	if err != nil {
		return nil, err
	}
	res, err := p.Provision(ctx, spec)
	if err != nil {
		return nil, toStatus(err)
	}
	if res == nil {
		return nil, status.Errorf(codes.Internal, "provider %s provisioned tenant %s and returned no result", p.Name(), spec.TenantID)
	}
	return provisionMsg(res), nil
}

func (s *server) Update(ctx context.Context, req *pluginpb.SpecRequest) (*pluginpb.UpdateResult, error) {
	p, spec, err := s.spec(req.Spec)
	if err != nil {
		return nil, err
	}
	res, err := p.Update(ctx, req.TenantId, spec)
	if err != nil {
		return nil, toStatus(err)
	}
	if res == nil {
		return nil, status.Errorf(codes.Internal, "provider %s updated tenant %s and returned no result", p.Name(), req.TenantId)
	}
	return updateMsg(res), nil
}

func (s *server) Destroy(ctx context.Context, req *pluginpb.TenantRef) (*pluginpb.Empty, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	if l, ok := p.(provider.Locator); ok {
		return empty(l.DestroyOf(ctx, refOf(req)))
	}
	return empty(p.Destroy(ctx, req.Id))
}

func (s *server) GetStatus(ctx context.Context, req *pluginpb.TenantRef) (*pluginpb.ComputeStatus, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	var st *provider.ComputeStatus
	if l, ok := p.(provider.Locator); ok {
		st, err = l.GetStatusOf(ctx, refOf(req))
	} else {
		st, err = p.GetStatus(ctx, req.Id)
	}
	if err != nil {
		return nil, toStatus(err)
	}
	if st == nil {
		return nil, status.Errorf(codes.Internal, "provider %s returned no status and no error for tenant %s", p.Name(), req.Id)
	}
	return statusMsg(st), nil
}

func (s *server) Inspect(ctx context.Context, req *pluginpb.SpecRequest) (*pluginpb.Inspection, error) {
	p, spec, err := s.spec(req.Spec)
	if err != nil {
		return nil, err
	}
	var in *provider.Inspection
	if d, ok := p.(provider.DriftDetector); ok {
		in, err = d.Inspect(ctx, spec)
	} else {
		var st *provider.ComputeStatus
		st, err = p.GetStatus(ctx, spec.TenantID)
		in = &provider.Inspection{Status: st}
	}
	if err != nil {
		return nil, toStatus(err)
	}
	if in == nil || in.Status == nil {
		return nil, status.Errorf(codes.Internal, "provider %s inspected tenant %s and returned no status", p.Name(), spec.TenantID)
	}
	return inspectionMsg(in), nil
}

func (s *server) CheckHealth(ctx context.Context, _ *pluginpb.Empty) (*pluginpb.Empty, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	if hc, ok := p.(provider.HealthChecker); ok {
		return empty(hc.CheckHealth(ctx))
	}
	return &pluginpb.Empty{}, nil
}

func (s *server) WatchChanges(_ *pluginpb.Empty, stream pluginpb.Provider_WatchChangesServer) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	n, ok := p.(provider.ChangeNotifier)
	if !ok {
		<-stream.Context().Done()
		return nil
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	changes := make(chan string, 256)
	var dropped sync.Once
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- n.WatchChanges(ctx, func(tenantID string) {
			select {
			case changes <- tenantID:
			default: // notifications are hints; the resync covers a lost one
				dropped.Do(func() {
					s.logger.Warn("change notifications are coming faster than landlord reads them; some are dropped")
				})
			}
		})
	}()
	for {
		select {
		case id := <-changes:
			if err := stream.Send(&pluginpb.TenantChanged{TenantId: id}); err != nil {
				return err
			}
		case err := <-watchErr:
			if err != nil && ctx.Err() == nil {
				return toStatus(fmt.Errorf("watch changes: %w", err))
			}
			return nil
		}
	}
}

func (s *server) Cancel(_ context.Context, req *pluginpb.CancelRequest) (*pluginpb.Empty, error) {
	s.ops.cancel(req.Operation)
	return &pluginpb.Empty{}, nil
}

// empty is the answer of a call that returns only an error.
func empty(err error) (*pluginpb.Empty, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	return &pluginpb.Empty{}, nil
}
