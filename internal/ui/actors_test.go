package ui

import "testing"

func TestActors(t *testing.T) {
	for _, tc := range []struct {
		typ, actor, want string
	}{
		{"status", "vm:KCJGP3:28280", "controller (replica vm:KCJGP3:28280)"},
		{"drift_detected", "ip-10-0-1-7.ec2.internal:ABC234:1", "controller (replica ip-10-0-1-7.ec2.internal:ABC234:1)"},
		{"updated", "vm:KCJGP3:28280", "rollout driver (replica vm:KCJGP3:28280)"},
		{"updated", "rollouts@vm:4242", "rollout driver (replica vm:4242)"},
		{"updated", "ops", "ops"},
		{"updated", "sso:alice@example.com", "sso:alice@example.com"},
		{"status", "vm:kcjgp3:28280", "vm:kcjgp3:28280"}, // not the identity's alphabet: someone's name
		{"created", "anonymous", "anonymous"},
	} {
		if got := tenantActor(tc.typ, tc.actor); got != tc.want {
			t.Errorf("tenantActor(%s, %s) = %q, want %q", tc.typ, tc.actor, got, tc.want)
		}
	}
	for actor, want := range map[string]string{
		"vm:KCJGP3:28280":  "rollout driver (replica vm:KCJGP3:28280)",
		"rollouts@vm:4242": "rollout driver (replica vm:4242)",
		"ops":              "ops",
	} {
		if got := rolloutActor(actor); got != want {
			t.Errorf("rolloutActor(%s) = %q, want %q", actor, got, want)
		}
	}
}
