package plugin

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/jaxxstorm/landlord/sdk/plugin/pluginpb"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// The conversions between the contract's Go types and the protocol's
// messages. Each is the identity on what it carries: a value converted
// there and back is equal to the original (TestConversionsRoundTrip).

func specMsg(s *provider.TenantComputeSpec) *pluginpb.Spec {
	if s == nil {
		return nil
	}
	w := s.Workload
	w.Secrets = nil            // they marshal redacted; they travel in Secrets
	body, _ := json.Marshal(w) // plain data: it cannot fail
	secrets := make([]*pluginpb.Secret, len(s.Secrets))
	for i, r := range s.Secrets {
		secrets[i] = &pluginpb.Secret{Container: r.Container, Name: r.Name, Value: r.Value.Reveal()}
	}
	return &pluginpb.Spec{
		TenantId: s.TenantID, TenantName: s.TenantName, ProviderType: s.ProviderType, Generation: s.Generation,
		ProviderConfig: s.ProviderConfig, ConfigHash: s.ConfigHash, Drift: string(s.Drift), ResourceIds: s.ResourceIDs,
		Workload: body, Secrets: secrets, Resolved: s.Resolved(),
	}
}

// specOf rebuilds, in the plugin, the spec landlord handed over. A
// provider with a ConfigDecoder decodes its options again from the config,
// as it did when landlord resolved the spec, so that it finds them in
// spec.Options as an in-process provider does.
func specOf(p provider.Provider, m *pluginpb.Spec) (*provider.TenantComputeSpec, error) {
	s, err := baseSpecOf(m)
	if err != nil {
		return nil, err
	}
	if len(s.ProviderConfig) == 0 {
		return s, nil
	}
	if m.Resolved {
		s.MarkResolved()
	}
	if d, ok := p.(provider.ConfigDecoder); ok {
		if err := d.DecodeConfig(s.ProviderConfig, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// baseSpecOf is the spec a message carries, without the provider's
// options.
func baseSpecOf(m *pluginpb.Spec) (*provider.TenantComputeSpec, error) {
	if m == nil {
		return nil, provider.Invalid("", "spec is missing")
	}
	s := &provider.TenantComputeSpec{
		TenantID: m.TenantId, TenantName: m.TenantName, ProviderType: m.ProviderType, Generation: m.Generation,
		ConfigHash: m.ConfigHash, Drift: provider.DriftPolicy(m.Drift), ResourceIDs: maps.Clone(m.ResourceIds),
	}
	if len(m.ProviderConfig) > 0 {
		s.ProviderConfig = json.RawMessage(m.ProviderConfig)
	}
	if len(m.Workload) > 0 {
		if err := json.Unmarshal(m.Workload, &s.Workload); err != nil {
			return nil, fmt.Errorf("plugin: decode the workload landlord sent for tenant %s: %w", m.TenantId, err)
		}
	}
	for _, r := range m.Secrets {
		s.Secrets = append(s.Secrets, workload.SecretReference{Container: r.Container, Name: r.Name, Value: workload.NewSecretValue(r.Value)})
	}
	return s, nil
}

func refMsg(t provider.TenantRef) *pluginpb.TenantRef {
	return &pluginpb.TenantRef{Id: t.ID, Name: t.Name, Provider: t.Provider, Config: t.Config, ResourceIds: t.ResourceIDs}
}

func refOf(m *pluginpb.TenantRef) provider.TenantRef {
	return provider.TenantRef{ID: m.GetId(), Name: m.GetName(), Provider: m.GetProvider(), Config: json.RawMessage(m.GetConfig()), ResourceIDs: maps.Clone(m.GetResourceIds())}
}

func capsMsg(c provider.Capabilities) *pluginpb.Capabilities {
	return &pluginpb.Capabilities{InPlaceUpdate: c.InPlaceUpdate, MultipleContainers: c.MultipleContainers, Secrets: c.Secrets,
		PublishedPorts: c.PublishedPorts, PublicNetworking: c.PublicNetworking, HealthChecks: c.HealthChecks, Scaling: c.Scaling, Volumes: c.Volumes}
}

func capsOf(m *pluginpb.Capabilities) provider.Capabilities {
	return provider.Capabilities{InPlaceUpdate: m.GetInPlaceUpdate(), MultipleContainers: m.GetMultipleContainers(), Secrets: m.GetSecrets(),
		PublishedPorts: m.GetPublishedPorts(), PublicNetworking: m.GetPublicNetworking(), HealthChecks: m.GetHealthChecks(), Scaling: m.GetScaling(), Volumes: m.GetVolumes()}
}

func endpointsMsg(es []provider.Endpoint) []*pluginpb.Endpoint {
	out := make([]*pluginpb.Endpoint, len(es))
	for i, e := range es {
		out[i] = &pluginpb.Endpoint{Container: e.Container, Name: e.Name, ContainerPort: int32(e.ContainerPort), Protocol: string(e.Protocol), Address: e.Address}
	}
	return out
}

func endpointsOf(ms []*pluginpb.Endpoint) []provider.Endpoint {
	if len(ms) == 0 {
		return nil
	}
	out := make([]provider.Endpoint, len(ms))
	for i, m := range ms {
		out[i] = provider.Endpoint{Container: m.Container, Name: m.Name, ContainerPort: int(m.ContainerPort), Protocol: workload.Protocol(m.Protocol), Address: m.Address}
	}
	return out
}

func timeMsg(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func timeOf(m *timestamppb.Timestamp) time.Time {
	if m == nil {
		return time.Time{}
	}
	return m.AsTime()
}

func provisionMsg(r *provider.ProvisionResult) *pluginpb.ProvisionResult {
	return &pluginpb.ProvisionResult{TenantId: r.TenantID, ProviderType: r.ProviderType, Status: string(r.Status), ResourceIds: r.ResourceIDs,
		Endpoints: endpointsMsg(r.Endpoints), Message: r.Message, ProvisionedAt: timeMsg(r.ProvisionedAt)}
}

func provisionOf(m *pluginpb.ProvisionResult) *provider.ProvisionResult {
	return &provider.ProvisionResult{TenantID: m.TenantId, ProviderType: m.ProviderType, Status: provider.ProvisionStatus(m.Status),
		ResourceIDs: nilIfEmpty(m.ResourceIds), Endpoints: endpointsOf(m.Endpoints), Message: m.Message, ProvisionedAt: timeOf(m.ProvisionedAt)}
}

func updateMsg(r *provider.UpdateResult) *pluginpb.UpdateResult {
	changes := make([]*pluginpb.Change, len(r.Changes))
	for i, c := range r.Changes {
		changes[i] = &pluginpb.Change{Field: c.Field, From: c.From, To: c.To}
	}
	return &pluginpb.UpdateResult{TenantId: r.TenantID, ProviderType: r.ProviderType, Status: string(r.Status), Changes: changes,
		ResourceIds: r.ResourceIDs, Endpoints: endpointsMsg(r.Endpoints), Message: r.Message, UpdatedAt: timeMsg(r.UpdatedAt)}
}

func updateOf(m *pluginpb.UpdateResult) *provider.UpdateResult {
	var changes []provider.Change
	for _, c := range m.Changes {
		changes = append(changes, provider.Change{Field: c.Field, From: c.From, To: c.To})
	}
	return &provider.UpdateResult{TenantID: m.TenantId, ProviderType: m.ProviderType, Status: provider.ProvisionStatus(m.Status), Changes: changes,
		ResourceIDs: nilIfEmpty(m.ResourceIds), Endpoints: endpointsOf(m.Endpoints), Message: m.Message, UpdatedAt: timeOf(m.UpdatedAt)}
}

func statusMsg(s *provider.ComputeStatus) *pluginpb.ComputeStatus {
	if s == nil {
		return nil
	}
	containers := make([]*pluginpb.ContainerStatus, len(s.Containers))
	for i, c := range s.Containers {
		containers[i] = &pluginpb.ContainerStatus{Name: c.Name, Image: c.Image, State: string(c.State), Health: string(c.Health),
			RestartCount: int32(c.RestartCount), Message: c.Message, Id: c.ID}
		if c.ExitCode != nil {
			code := int32(*c.ExitCode)
			containers[i].ExitCode = &code
		}
	}
	return &pluginpb.ComputeStatus{TenantId: s.TenantID, ProviderType: s.ProviderType, State: string(s.State), Containers: containers,
		Health: string(s.Health), Endpoints: endpointsMsg(s.Endpoints), Generation: s.Generation, Message: s.Message,
		LastUpdated: timeMsg(s.LastUpdated), Metadata: s.Metadata}
}

func statusOf(m *pluginpb.ComputeStatus) *provider.ComputeStatus {
	if m == nil {
		return nil
	}
	containers := make([]provider.ContainerStatus, len(m.Containers))
	for i, c := range m.Containers {
		containers[i] = provider.ContainerStatus{Name: c.Name, Image: c.Image, State: provider.ContainerState(c.State),
			Health: provider.HealthStatus(c.Health), RestartCount: int(c.RestartCount), Message: c.Message, ID: c.Id}
		if c.ExitCode != nil {
			code := int(*c.ExitCode)
			containers[i].ExitCode = &code
		}
	}
	return &provider.ComputeStatus{TenantID: m.TenantId, ProviderType: m.ProviderType, State: provider.ComputeState(m.State), Containers: containers,
		Health: provider.HealthStatus(m.Health), Endpoints: endpointsOf(m.Endpoints), Generation: m.Generation, Message: m.Message,
		LastUpdated: timeOf(m.LastUpdated), Metadata: nilIfEmpty(m.Metadata)}
}

func inspectionMsg(in *provider.Inspection) *pluginpb.Inspection {
	drift := make([]*pluginpb.Drift, len(in.Drift))
	for i, d := range in.Drift {
		drift[i] = &pluginpb.Drift{Path: d.Path, Kind: string(d.Kind), Expected: d.Expected, Found: d.Found}
	}
	return &pluginpb.Inspection{Status: statusMsg(in.Status), Drift: drift}
}

func inspectionOf(m *pluginpb.Inspection) *provider.Inspection {
	var drift []provider.Drift
	for _, d := range m.Drift {
		drift = append(drift, provider.Drift{Path: d.Path, Kind: provider.DriftKind(d.Kind), Expected: d.Expected, Found: d.Found})
	}
	return &provider.Inspection{Status: statusOf(m.Status), Drift: drift}
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
