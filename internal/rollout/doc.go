// Package rollout drives the active rollouts of plans (internal/fleet):
// one process at a time, the holder of the "rollouts" lease, steps each
// rollout every tick with fleet.Step and writes what it decides through
// fleet.Store. Every write is conditional on what was read (a member's
// state, the rollout's version), so a driver that lost its lease without
// knowing, or a restart after kill -9, never changes a tenant twice: the
// member's record and the tenant's change commit together.
package rollout
