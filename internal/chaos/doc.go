// Package chaos holds landlord's fault tests: `landlord serve` run as a
// user runs it, then hurt as production hurts it (a full disk, one of
// three replicas killed, retries across a crash), checking that nothing is lost,
// duplicated or half-written and that it recovers without a restart. They
// run in CI with the rest of the suite, bounded in time and count, on
// loopback only. Tests that need root (a tmpfs mount) skip without it.
package chaos
