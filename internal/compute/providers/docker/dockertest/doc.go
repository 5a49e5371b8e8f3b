// Package dockertest gives tests the local Docker Engine and a workload to
// run on it without a registry: the echo server of ./echo (an HTTP server
// that answers /healthz, echoes its environment on /env, exits on /exit and
// fails its health check after /fail-health, on $PORT or 8080), built as a
// static binary into a FROM scratch image through the Engine's ImageBuild.
//
// Engine skips a test when no Engine answers, and fails it instead when
// LANDLORD_REQUIRE_DOCKER is set to 1 (as CI does).
//
// The image is built once per test binary under two tags of one image, so
// that a test can change a workload's image:
//
//	landlord-test/echo:<hash>-<owner>-<run>
//	landlord-test/echo:<hash>-<owner>-<run>-b
//
// where <hash> is a hash of the echo server's source (embedded, so a change
// to it makes new tags), <owner> names the test binary's package ("docker"
// for docker.test) and <run> is the test binary's run id (RunID). Test
// binaries of different packages, and runs of one package by several
// people or CI jobs, share the Engine at once; each removes its own tags
// when it ends, so one run's cleanup never takes away an image another is
// still using. The tag is never "latest": Nomad's docker driver always
// pulls such an image, and there is no registry.
//
// Runs: a package names what it creates on the Engine after its run,
// Prefix("lltest") being lltest-<run id>, so that its cleanups remove only
// its own resources. A run keeps a lock file in os.TempDir locked while it
// runs, so that a later run can tell what a crashed or killed run left
// (its lock is free) from what a running one owns; Sweep removes the
// former, and what a run of another host left once a day old.
//
// A package that uses the Engine runs its tests through Main, which sweeps
// before them and removes the run's resources and echo images after them:
//
//	func TestMain(m *testing.M) { os.Exit(dockertest.Main(m, "lltest")) }
//
// A TestMain that runs its tests otherwise calls End once they have run.
package dockertest
