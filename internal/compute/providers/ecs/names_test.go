package ecs

import (
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

func TestServiceName(t *testing.T) {
	if got := serviceName("landlord-tenant-", "acme"); got != "landlord-tenant-acme" {
		t.Errorf("serviceName = %q", got)
	}
	long := strings.Repeat("p", 200)
	a, b := serviceName(long, strings.Repeat("a", 63)), serviceName(long, strings.Repeat("a", 62)+"b")
	if len(a) != maxName || len(b) != maxName || a == b {
		t.Errorf("long names: %d and %d characters, equal %v; want %d each and different", len(a), len(b), a == b, maxName)
	}
	if a != serviceName(long, strings.Repeat("a", 63)) {
		t.Error("a long name is not deterministic")
	}
}

func TestClientToken(t *testing.T) {
	tok := clientToken("0190d3c2-1111-7000-8000-000000000001", 3, "")
	if len(tok) > 36 {
		t.Errorf("token %q is %d characters; ECS allows 36", tok, len(tok))
	}
	for name, other := range map[string]string{
		"next generation":      clientToken("0190d3c2-1111-7000-8000-000000000001", 4, ""),
		"after an old service": clientToken("0190d3c2-1111-7000-8000-000000000001", 3, "2026-11-23T10:00:00Z"),
		"another tenant":       clientToken("0190d3c2-1111-7000-8000-000000000002", 3, ""),
	} {
		if other == tok {
			t.Errorf("%s: same token %q", name, tok)
		}
	}
	if clientToken("0190d3c2-1111-7000-8000-000000000001", 3, "") != tok {
		t.Error("the token is not deterministic")
	}
}

func TestParseARN(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{"arn:aws:ecs:us-west-2:123456789012:cluster/landlord", ""},
		{"arn:aws-cn:ecs:cn-north-1:123456789012:cluster/x", ""},
		{"arn:aws:iam::123456789012:role/landlord", ""},
		{"arn:azure:ecs:us-west-2:123456789012:cluster/x", "partition"},
		{"arn:aws:ecs:uswest2:123456789012:cluster/x", "region"},
		{"arn:aws:ecs:us-west-2:1234:cluster/x", "account"},
		{"cluster/x", "not an ARN"},
	} {
		_, err := parseARN(tc.in)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("parseARN(%q) = %v, want error containing %q", tc.in, err, tc.err)
		}
	}
	a, _ := parseARN("arn:aws:ecs:us-west-2:123456789012:service/landlord/landlord-acme")
	if c, n, ok := splitServiceARN(a); !ok || c != "landlord" || n != "landlord-acme" {
		t.Errorf("splitServiceARN = %q %q %v", c, n, ok)
	}
}

func TestFargateSize(t *testing.T) {
	for _, tc := range []struct {
		cpu, mem         int64
		wantCPU, wantMem int64
		ok               bool
	}{
		{0, 0, 256, 512, true},
		{250, 0, 256, 512, true},
		{0, 3000, 512, 3072, true},
		{1000, 0, 1024, 2048, true},
		{250, 2048, 256, 2048, true},
		{250, 4096, 0, 0, false}, // 0.25 vCPU runs at most 2 GB
		{300, 1024, 0, 0, false}, // not a Fargate CPU size
		{20000, 0, 0, 0, false},
	} {
		w := workload.Workload{Resources: workload.ResourceRequirements{CPUMillicores: tc.cpu, MemoryMiB: tc.mem}}
		cpu, mem, ok := fargateSize(w)
		if cpu != tc.wantCPU || mem != tc.wantMem || ok != tc.ok {
			t.Errorf("fargateSize(%dm, %d MiB) = %d, %d, %v; want %d, %d, %v", tc.cpu, tc.mem, cpu, mem, ok, tc.wantCPU, tc.wantMem, tc.ok)
		}
	}
}
