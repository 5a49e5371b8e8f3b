package ecs_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
)

// BenchmarkResolve resolves the docs' Fargate tenant config, as every
// create and set of an ECS tenant does: the schema, the defaults and the
// provider's own checks (AWS's rules among them).
//
//	go test -run '^$' -bench Resolve -benchmem ./internal/compute/providers/ecs/
func BenchmarkResolve(b *testing.B) {
	m := resolver(b, `{"cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord", "launch_type": "FARGATE", "subnets": ["subnet-0a1b2c3d"]}`)
	config := json.RawMessage(`{"image": "ghcr.io/example/app:1.4", "ports": [{"container_port": 8080}], "env": {"TENANT_PLAN": "gold"},
	  "health_check": {"command": ["curl", "-fs", "http://localhost:8080/healthz"], "interval": "15s"},
	  "resources": {"cpu_millicores": 500, "memory_mib": 1024}, "desired_count": 2, "tags": {"team": "platform"}}`)
	for b.Loop() {
		if _, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "0190d3c2-1111-7000-8000-000000000001", TenantName: "acme", Generation: 1, ComputeConfig: config}); err != nil {
			b.Fatal(err)
		}
	}
}
