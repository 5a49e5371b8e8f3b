package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/jaxxstorm/landlord/sdk/plugin/pluginpb"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// ErrPlugin marks a plugin that cannot be started: its binary is missing,
// not what its checksum says, not a landlord plugin, speaks another
// protocol version, or refuses its settings.
var ErrPlugin = errors.New("provider plugin cannot be started")

// Options say how to start a plugin.
type Options struct {
	// Name is the plugin's name in landlord's configuration, which is the
	// provider's name: the plugin must describe itself with it.
	Name string
	// Path is the plugin's binary.
	Path string
	// SHA256 is the hex SHA-256 of the binary; the binary is checked
	// against it every time it is started. Empty skips the check (tests
	// only: landlord's configuration requires it).
	SHA256 string
	// Args and Env are the binary's arguments and environment ("KEY=VALUE"
	// entries, added to a minimal environment: PATH, HOME, TMPDIR, and
	// what go-plugin sets; landlord's own environment is not passed on).
	Args []string
	Env  []string
	// Settings is the plugin's settings block, handed to it at Configure.
	Settings json.RawMessage
	// HashKey is the install's key, handed to the plugin at Configure.
	HashKey []byte
	// LandlordVersion is handed to the plugin at Configure.
	LandlordVersion string
	// Logger receives the plugin's log lines and what happens to it, each
	// with plugin=Name; nil discards them.
	Logger *slog.Logger
	// StartTimeout bounds one start (process, handshake, Configure,
	// Describe); zero means a minute.
	StartTimeout time.Duration
	// CancelGrace is how long landlord waits for the plugin's answer to a
	// call after the operation's context ends (cancelled, or past its
	// deadline), while the plugin cleans up: a plugin that hangs is given
	// up on then, and the call fails with the context's error, retryable.
	// Zero means DefaultCancelGrace.
	CancelGrace time.Duration
}

// Plugin is a running plugin: a provider.Provider whose every method is a
// call to the plugin's process. When the process dies, Plugin starts it
// again, with backoff; meanwhile every call fails with an error wrapping
// provider.ErrProviderUnavailable, retryable, and nothing else happens:
// no tenant's workload is touched because its provider was away.
type Plugin struct {
	opts Options
	log  *slog.Logger
	desc *pluginpb.DescribeResponse

	mu      sync.Mutex
	current *process // nil while the plugin is down
	// starting is the client of a start under way, which Close kills so
	// as not to wait for its handshake.
	starting *goplugin.Client
	closed   bool
	// up is closed and replaced each time a process is up.
	up chan struct{}
	// done is closed by Close; ctx ends with it, ending a restart under
	// way.
	done   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// process is one run of the plugin's binary.
type process struct {
	client *goplugin.Client
	rpc    pluginpb.ProviderClient
}

// Start starts the plugin, configures it and reads its description; the
// plugin keeps running (and is restarted when it dies) until Close. A
// plugin that cannot be started is an error wrapping ErrPlugin.
func Start(ctx context.Context, opts Options) (*Plugin, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = time.Minute
	}
	if opts.CancelGrace == 0 {
		opts.CancelGrace = DefaultCancelGrace
	}
	p := &Plugin{opts: opts, log: opts.Logger.With(slog.String("plugin", opts.Name)), up: make(chan struct{}), done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	proc, desc, err := p.launch(ctx)
	if err != nil {
		p.cancel()
		return nil, err
	}
	if desc.Name != opts.Name {
		proc.client.Kill()
		p.cancel()
		return nil, fmt.Errorf("%w: plugin %s (%s) says it is provider %q; name the plugin %q in the configuration", ErrPlugin, opts.Name, opts.Path, desc.Name, desc.Name)
	}
	p.desc = desc
	p.setCurrent(proc)
	p.wg.Go(func() { p.supervise(proc) })
	return p, nil
}

// launch starts one process of the plugin and configures it.
func (p *Plugin) launch(ctx context.Context) (*process, *pluginpb.DescribeResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.StartTimeout)
	defer cancel()
	cfg := &goplugin.ClientConfig{
		HandshakeConfig:  handshake,
		VersionedPlugins: pluginSets(nil),
		Cmd:              p.command(),
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           &hostLogger{log: p.log},
		StartTimeout:     p.opts.StartTimeout,
		SkipHostEnv:      true,
		GRPCDialOptions:  []grpc.DialOption{grpc.WithUnaryInterceptor(hostInterceptor(p.opts.CancelGrace))},
	}
	if p.opts.SHA256 != "" {
		sum, err := hex.DecodeString(p.opts.SHA256)
		if err != nil || len(sum) != sha256.Size {
			return nil, nil, fmt.Errorf("%w: plugin %s: sha256 %q is not 64 hex digits", ErrPlugin, p.opts.Name, p.opts.SHA256)
		}
		cfg.SecureConfig = &goplugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	}
	client := goplugin.NewClient(cfg)
	if !p.setStarting(client) {
		client.Kill()
		return nil, nil, fmt.Errorf("%w: plugin %s: stopped", ErrPlugin, p.opts.Name)
	}
	defer p.setStarting(nil)
	proc, err := p.connect(ctx, client)
	if err != nil {
		client.Kill()
		return nil, nil, err
	}
	settings := p.opts.Settings
	if len(settings) == 0 {
		settings = json.RawMessage("null")
	}
	if _, err := proc.rpc.Configure(ctx, &pluginpb.ConfigureRequest{Settings: settings, HashKey: p.opts.HashKey, LandlordVersion: p.opts.LandlordVersion}); err != nil {
		client.Kill()
		return nil, nil, fmt.Errorf("%w: plugin %s refuses its settings: %w", ErrPlugin, p.opts.Name, fromStatus(p.opts.Name, "Configure", err))
	}
	desc, err := proc.rpc.Describe(ctx, &pluginpb.DescribeRequest{})
	if err != nil {
		client.Kill()
		return nil, nil, fmt.Errorf("%w: plugin %s: describe: %w", ErrPlugin, p.opts.Name, fromStatus(p.opts.Name, "Describe", err))
	}
	return proc, desc, nil
}

// setStarting records the client of a start under way (nil when it is
// over); false when the Plugin is closed.
func (p *Plugin) setStarting(c *goplugin.Client) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starting = c
	return !p.closed
}

// connect starts the process and shakes hands with it.
func (p *Plugin) connect(ctx context.Context, client *goplugin.Client) (*process, error) {
	if _, err := os.Stat(p.opts.Path); err != nil {
		return nil, fmt.Errorf("%w: plugin %s: %w", ErrPlugin, p.opts.Name, err)
	}
	rpc, err := client.Client()
	if err != nil {
		return nil, fmt.Errorf("%w: plugin %s (%s): %w", ErrPlugin, p.opts.Name, p.opts.Path, err)
	}
	if v := client.NegotiatedVersion(); v != ProtocolVersion {
		return nil, fmt.Errorf("%w: plugin %s speaks protocol version %d; this landlord speaks %d", ErrPlugin, p.opts.Name, v, ProtocolVersion)
	}
	raw, err := rpc.Dispense(pluginKey)
	if err != nil {
		return nil, fmt.Errorf("%w: plugin %s serves no provider: %w", ErrPlugin, p.opts.Name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: plugin %s: %w", ErrPlugin, p.opts.Name, err)
	}
	return &process{client: client, rpc: raw.(pluginpb.ProviderClient)}, nil
}

// command is the plugin's process: its binary, arguments, and a minimal
// environment with the configured entries.
func (p *Plugin) command() *exec.Cmd {
	cmd := exec.Command(p.opts.Path, p.opts.Args...)
	for _, key := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(key); ok {
			cmd.Env = append(cmd.Env, key+"="+v)
		}
	}
	cmd.Env = append(cmd.Env, p.opts.Env...)
	return cmd
}

// restart backoff: the first restart waits restartMin, each next one twice
// as long as the one before, up to restartMax; a plugin that stayed up for
// restartMax starts again from restartMin.
var (
	restartMin = 100 * time.Millisecond
	restartMax = 30 * time.Second
	// exitPoll is how often the supervisor looks whether the process
	// exited (go-plugin has no notification of it).
	exitPoll = 100 * time.Millisecond
)

// supervise restarts the plugin each time its process exits, until Close.
func (p *Plugin) supervise(proc *process) {
	wait := restartMin
	started := time.Now()
	for {
		if !p.waitExit(proc) {
			return // closed
		}
		p.setCurrent(nil)
		proc.client.Kill() // the process is gone: this closes the client's connection and goroutines
		if time.Since(started) > restartMax {
			wait = restartMin
		}
		p.log.Error("the provider plugin exited; its tenants' operations fail as provider_unavailable until it is back",
			slog.Duration("restart_in", wait))
		for {
			select {
			case <-p.done:
				return
			case <-time.After(wait):
			}
			wait = min(wait*2, restartMax)
			next, desc, err := p.launch(p.ctx)
			if err == nil && !p.sameDescription(desc) {
				next.client.Kill()
				err = fmt.Errorf("%w: plugin %s describes itself differently from when landlord started (name, schema or defaults changed); restart landlord to take the new description", ErrPlugin, p.opts.Name)
			}
			if err != nil {
				p.log.Error("the provider plugin cannot be restarted", slog.String("error", err.Error()), slog.Duration("retry_in", wait))
				continue
			}
			proc, started = next, time.Now()
			p.setCurrent(proc)
			p.log.Info("the provider plugin is running again")
			break
		}
	}
}

// waitExit returns true when proc exited, false when the Plugin closed.
func (p *Plugin) waitExit(proc *process) bool {
	tick := time.NewTicker(exitPoll)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return false
		case <-tick.C:
			if proc.client.Exited() {
				return true
			}
		}
	}
}

func (p *Plugin) sameDescription(d *pluginpb.DescribeResponse) bool {
	return d.Name == p.desc.Name && bytes.Equal(d.ConfigSchema, p.desc.ConfigSchema) && bytes.Equal(d.ConfigDefaults, p.desc.ConfigDefaults)
}

func (p *Plugin) setCurrent(proc *process) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		if proc != nil {
			proc.client.Kill()
		}
		return
	}
	p.current = proc
	if proc != nil {
		close(p.up)
		p.up = make(chan struct{})
	}
}

// rpc is the client of the running process, or an error wrapping
// provider.ErrProviderUnavailable while there is none.
func (p *Plugin) rpc(method string) (pluginpb.ProviderClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.current == nil || p.current.client.Exited() {
		state := "is being restarted"
		if p.closed {
			state = "is stopped"
		}
		return nil, provider.Retryable(fmt.Errorf("plugin %s: %s: %w: the plugin's process %s", p.opts.Name, method, provider.ErrProviderUnavailable, state))
	}
	return p.current.rpc, nil
}

// waitUp returns a channel closed when a process is next up.
func (p *Plugin) waitUp() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.up
}

// Close stops the plugin's process and its supervision.
func (p *Plugin) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	p.cancel()
	proc, starting := p.current, p.starting
	p.current = nil
	p.mu.Unlock()
	if proc != nil {
		proc.client.Kill()
	}
	if starting != nil {
		starting.Kill()
	}
	p.wg.Wait()
	return nil
}

// PID is the process id of the plugin's running process, or 0 while it is
// down: for operators' tools and tests that kill it.
func (p *Plugin) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.current == nil {
		return 0
	}
	if rc := p.current.client.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// Provider is the plugin as landlord registers it: a provider.Provider
// with exactly the optional interfaces the plugin's provider has, as it
// described itself, since landlord and the conformance suite find them by
// type assertion. HealthChecker, ConfigDecoder and Locator are always
// there, with the meaning of the provider's own or, without one, of
// landlord's default (healthy while the plugin answers; the config's
// ValidateConfig; the workload found by tenant id).
func (p *Plugin) Provider() provider.Provider {
	c, n, d := capabilities{p}, notifier{p}, detector{p}
	switch desc := p.desc; {
	case desc.Capabilities != nil && desc.ChangeNotifier && desc.DriftDetector:
		return struct {
			*Plugin
			capabilities
			notifier
			detector
		}{p, c, n, d}
	case desc.Capabilities != nil && desc.ChangeNotifier:
		return struct {
			*Plugin
			capabilities
			notifier
		}{p, c, n}
	case desc.Capabilities != nil && desc.DriftDetector:
		return struct {
			*Plugin
			capabilities
			detector
		}{p, c, d}
	case desc.ChangeNotifier && desc.DriftDetector:
		return struct {
			*Plugin
			notifier
			detector
		}{p, n, d}
	case desc.Capabilities != nil:
		return struct {
			*Plugin
			capabilities
		}{p, c}
	case desc.ChangeNotifier:
		return struct {
			*Plugin
			notifier
		}{p, n}
	case desc.DriftDetector:
		return struct {
			*Plugin
			detector
		}{p, d}
	default:
		return p
	}
}

// The optional interfaces a plugin's provider may have, each over the
// Plugin.
type (
	capabilities struct{ p *Plugin }
	notifier     struct{ p *Plugin }
	detector     struct{ p *Plugin }
)

func (c capabilities) Capabilities() provider.Capabilities { return capsOf(c.p.desc.Capabilities) }

func (n notifier) WatchChanges(ctx context.Context, changed func(tenantID string)) error {
	return n.p.watchChanges(ctx, changed)
}

func (d detector) Inspect(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	return d.p.inspect(ctx, spec)
}
