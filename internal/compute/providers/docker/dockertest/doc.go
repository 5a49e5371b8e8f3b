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
//	landlord-test/echo:<hash>-<owner>
//	landlord-test/echo:<hash>-<owner>-b
//
// where <hash> is a hash of the echo server's source (embedded, so a change
// to it makes new tags) and <owner> names the test binary's package
// ("docker" for docker.test). Test binaries of different packages run in
// parallel and each removes its own tags when it ends, so one package's
// cleanup never takes away an image another is still using. The tag is
// never "latest": Nomad's docker driver always pulls such an image, and
// there is no registry.
//
// A package that calls EchoImage removes its tags afterwards:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		dockertest.RemoveEchoImages()
//		os.Exit(code)
//	}
package dockertest
