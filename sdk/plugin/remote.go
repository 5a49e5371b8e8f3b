package plugin

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/jaxxstorm/landlord/sdk/plugin/pluginpb"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// The provider.Provider methods of a Plugin: each is one call to the
// plugin's process, with the same contract as the method of an in-process
// provider. What the plugin described at start (name, schema, defaults,
// capabilities) is answered from that description.

var (
	_ provider.Provider           = (*Plugin)(nil)
	_ provider.HealthChecker      = (*Plugin)(nil)
	_ provider.ConfigDecoder      = (*Plugin)(nil)
	_ provider.Locator            = (*Plugin)(nil)
	_ provider.CapabilityReporter = capabilities{}
	_ provider.ChangeNotifier     = notifier{}
	_ provider.DriftDetector      = detector{}
)

// destroyBound bounds a Destroy whose context is cancelled: the contract
// has Destroy finish its cleanup all the same, so the call is sent with the
// context's values and without its cancellation, for at most this long.
var destroyBound = 5 * time.Minute

func (p *Plugin) Name() string                    { return p.desc.Name }
func (p *Plugin) ConfigSchema() json.RawMessage   { return p.desc.ConfigSchema }
func (p *Plugin) ConfigDefaults() json.RawMessage { return nullIfEmpty(p.desc.ConfigDefaults) }

func nullIfEmpty(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// ValidateConfig and DecodeConfig are the plugin's checks of a config's
// own fields (its DecodeConfig, else its ValidateConfig). The options the
// plugin decodes stay in the plugin, which decodes them again from the
// config of each call; landlord's spec has none.
func (p *Plugin) ValidateConfig(config json.RawMessage) error {
	return p.checkConfig(config, nil)
}

func (p *Plugin) DecodeConfig(config json.RawMessage, spec *provider.TenantComputeSpec) error {
	return p.checkConfig(config, spec)
}

func (p *Plugin) checkConfig(config json.RawMessage, spec *provider.TenantComputeSpec) error {
	rpc, err := p.rpc("CheckConfig")
	if err != nil {
		return err
	}
	// Resolution has no context; a config check is quick.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = rpc.CheckConfig(ctx, &pluginpb.CheckConfigRequest{Config: config, Spec: specMsg(spec)})
	return p.fail("CheckConfig", err)
}

func (p *Plugin) Validate(ctx context.Context, spec *provider.TenantComputeSpec) error {
	rpc, err := p.rpc("Validate")
	if err != nil {
		return err
	}
	_, err = rpc.Validate(ctx, &pluginpb.SpecRequest{Spec: specMsg(spec)})
	return p.fail("Validate", err)
}

func (p *Plugin) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	rpc, err := p.rpc("Provision")
	if err != nil {
		return nil, err
	}
	res, err := rpc.Provision(ctx, &pluginpb.SpecRequest{Spec: specMsg(spec)})
	if err != nil {
		return nil, p.fail("Provision", err)
	}
	return provisionOf(res), nil
}

func (p *Plugin) Update(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error) {
	rpc, err := p.rpc("Update")
	if err != nil {
		return nil, err
	}
	res, err := rpc.Update(ctx, &pluginpb.SpecRequest{Spec: specMsg(spec), TenantId: tenantID})
	if err != nil {
		return nil, p.fail("Update", err)
	}
	return updateOf(res), nil
}

func (p *Plugin) Destroy(ctx context.Context, tenantID string) error {
	return p.DestroyOf(ctx, provider.TenantRef{ID: tenantID, Provider: p.Name()})
}

func (p *Plugin) DestroyOf(ctx context.Context, t provider.TenantRef) error {
	rpc, err := p.rpc("Destroy")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), destroyBound)
	defer cancel()
	_, err = rpc.Destroy(ctx, refMsg(t))
	return p.fail("Destroy", err)
}

func (p *Plugin) GetStatus(ctx context.Context, tenantID string) (*provider.ComputeStatus, error) {
	return p.GetStatusOf(ctx, provider.TenantRef{ID: tenantID, Provider: p.Name()})
}

func (p *Plugin) GetStatusOf(ctx context.Context, t provider.TenantRef) (*provider.ComputeStatus, error) {
	rpc, err := p.rpc("GetStatus")
	if err != nil {
		return nil, err
	}
	st, err := rpc.GetStatus(ctx, refMsg(t))
	if err != nil {
		return nil, p.fail("GetStatus", err)
	}
	return statusOf(st), nil
}

func (p *Plugin) inspect(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	rpc, err := p.rpc("Inspect")
	if err != nil {
		return nil, err
	}
	in, err := rpc.Inspect(ctx, &pluginpb.SpecRequest{Spec: specMsg(spec)})
	if err != nil {
		return nil, p.fail("Inspect", err)
	}
	return inspectionOf(in), nil
}

// CheckHealth is nil when the plugin's process answers and its provider
// is healthy (a provider without a health check is healthy while its
// plugin answers).
func (p *Plugin) CheckHealth(ctx context.Context) error {
	rpc, err := p.rpc("CheckHealth")
	if err != nil {
		return err
	}
	_, err = rpc.CheckHealth(ctx, &pluginpb.Empty{})
	return p.fail("CheckHealth", err)
}

// watchChanges passes on the plugin's change notifications until ctx ends,
// across restarts of the plugin: after a restart it watches the new
// process. Notifications missed while the plugin was down are left to the
// controller's resync, as the contract allows.
func (p *Plugin) watchChanges(ctx context.Context, changed func(tenantID string)) error {
	wait := restartMin
	for ctx.Err() == nil {
		up := p.waitUp()
		start := time.Now()
		if rpc, err := p.rpc("WatchChanges"); err == nil {
			err := watch(ctx, rpc, changed)
			if ctx.Err() != nil {
				return nil
			}
			if time.Since(start) > restartMax {
				wait = restartMin // it watched a while: a new run of failures
			}
			if wait == restartMin {
				p.log.Warn("the provider plugin's change watch ended; watching again", slog.String("error", err.Error()))
			}
		}
		select {
		case <-ctx.Done():
		case <-up: // a new process
			wait = restartMin
		case <-time.After(wait):
			wait = min(wait*2, restartMax)
		}
	}
	return nil
}

// watch passes on the notifications of one watch call until it ends, and
// returns why it ended.
func watch(ctx context.Context, rpc pluginpb.ProviderClient, changed func(string)) error {
	stream, err := rpc.WatchChanges(ctx, &pluginpb.Empty{})
	if err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		changed(m.TenantId)
	}
}

// fail is the provider's error of a call, as the plugin returned it.
func (p *Plugin) fail(method string, err error) error {
	if err == nil {
		return nil
	}
	return fromStatus(p.opts.Name, method, err)
}
