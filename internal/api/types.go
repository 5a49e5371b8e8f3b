package api

import (
	"encoding/json"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
)

// The wire types of API v1. They are the one description of the API: the
// handlers read and write them and the OpenAPI document is generated from
// them.

// Tenant is a tenant as the API shows it.
type Tenant struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	ComputeProvider string `json:"compute_provider"`
	// ComputeConfig is the config as submitted, with secret (writeOnly)
	// values replaced by "[redacted]".
	ComputeConfig json.RawMessage `json:"compute_config"`
	// EffectiveConfig is the config the provider gets (operator defaults
	// merged under it, secrets redacted); shown for dry runs.
	EffectiveConfig    json.RawMessage    `json:"effective_config,omitempty"`
	Labels             map[string]string  `json:"labels,omitempty"`
	Annotations        map[string]string  `json:"annotations,omitempty"`
	Status             string             `json:"status"`
	StatusMessage      string             `json:"status_message,omitempty"`
	Generation         int64              `json:"generation"`
	ObservedGeneration int64              `json:"observed_generation"`
	Version            int64              `json:"version"`
	Attempts           int                `json:"attempts,omitempty"`
	RetryAt            *time.Time         `json:"retry_at,omitempty"`
	ResourceIDs        map[string]string  `json:"resource_ids,omitempty"`
	Endpoints          []compute.Endpoint `json:"endpoints,omitempty"`
	CreatedAt          time.Time          `json:"created_at"`
	UpdatedAt          time.Time          `json:"updated_at"`
	DeletedAt          *time.Time         `json:"deleted_at,omitempty"`
}

// CreateTenantRequest is the body of POST /v1/tenants.
type CreateTenantRequest struct {
	Name          string            `json:"name"`
	ComputeConfig json.RawMessage   `json:"compute_config"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// ReplaceTenantRequest is the body of PUT /v1/tenants/{tenant}: the whole
// desired state. A secret value sent back as "[redacted]" keeps the stored
// secret.
type ReplaceTenantRequest struct {
	ComputeConfig json.RawMessage   `json:"compute_config"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// TenantList is a page of tenants.
type TenantList struct {
	Tenants       []Tenant `json:"tenants"`
	NextPageToken string   `json:"next_page_token"`
}

// Event is one entry of a tenant's history.
type Event struct {
	Time       time.Time `json:"time"`
	Type       string    `json:"type"`
	From       string    `json:"from,omitempty"`
	To         string    `json:"to,omitempty"`
	Generation int64     `json:"generation"`
	Message    string    `json:"message,omitempty"`
	Actor      string    `json:"actor"`
}

// EventList is a page of events.
type EventList struct {
	Events        []Event `json:"events"`
	NextPageToken string  `json:"next_page_token"`
}

// Provider is an enabled compute provider.
type Provider struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
	Healthy bool   `json:"healthy"`
	Message string `json:"message"`
}

// ProviderList lists the enabled compute providers.
type ProviderList struct {
	Providers []Provider `json:"providers"`
}

// ComputeConfig describes a provider's tenant compute_config.
type ComputeConfig struct {
	Provider string          `json:"provider"`
	Schema   json.RawMessage `json:"schema"`
	// Defaults are merged under each tenant's compute_config; null when the
	// provider has none.
	Defaults json.RawMessage `json:"defaults"`
}

// Health is the answer of /healthz and /readyz.
type Health struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks,omitempty"`
}
