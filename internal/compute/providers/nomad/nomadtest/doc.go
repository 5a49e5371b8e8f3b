// Package nomadtest runs a real Nomad agent for tests: `nomad agent -dev`
// (server and client in one process), built from its Go module by
// testservers/build into a cache outside the repository, started on
// loopback ports once per test binary, with the docker driver on the local
// Docker Engine and the raw_exec driver enabled.
//
// The agent listens on 127.0.0.1 only and fingerprints the loopback
// interface, so a dynamic port of a job is a 127.0.0.1 host port. It runs
// with no Consul (services use provider "nomad"), no update check and no
// cloud fingerprinters. Its docker driver never removes images (the test
// images exist only locally, and there is no registry), and labels every
// container with com.hashicorp.nomad.alloc_id, job_id, job_name,
// task_group_name, task_name, namespace, node_id and node_name: a driver
// left at its defaults sets alloc_id alone.
//
// Jobs in tests run the echo image of dockertest under one of its tags,
// never "latest" (the driver always pulls such an image), with the group
// network mode "host", the default (bridge needs CNI plugins and a pause
// image), and a short update min_healthy_time (10 s by default).
//
// StartWithACL starts, for one test, an agent of its own with ACLs enabled
// and bootstrapped, for tests of what a token with a policy may do.
//
// A package that calls Start runs its tests through Main, which stops the
// agent afterwards and removes what it leaves behind (containers, helper
// processes, tmpfs mounts, its directory), then removes dockertest's echo
// images:
//
//	func TestMain(m *testing.M) { os.Exit(nomadtest.Main(m)) }
//
// Start skips the test, with the reason and how to fix it, when the binary
// is absent, and fails it instead when LANDLORD_REQUIRE_NOMAD is set to 1
// (as CI does, after building it). It fails when no Docker Engine answers,
// which the agent's docker driver needs.
package nomadtest
