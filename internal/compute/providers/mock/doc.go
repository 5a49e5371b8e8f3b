// Package mock is an in-memory compute provider for tests and demos. It is a
// real implementation of the provider.Provider contract, safe for concurrent
// use, with injectable latency and failures:
//
//   - its configuration block accepts "latency" (a delay added to every
//     operation) and "failure_rate" (the fraction of operations that fail with
//     a retryable error);
//   - a tenant asks for behaviour with an "x-mock" object in its
//     compute_config: {"fail": "transient"|"terminal", "fail_times": N,
//     "latency": "250ms", "operations": ["provision", "update", "destroy"],
//     "start_after": "5s", "progress": "pulling image", "listen": true}.
//     With fail_times N, the first N calls of each listed operation fail and
//     later ones succeed; without it every call fails. With start_after the
//     workload is pending (starting) for that long after each provision or
//     update, as on platforms that start workloads asynchronously; progress is
//     reported (provider.ReportProgress) at the start of each provision and
//     update.
//
// Endpoints: the mock runs nothing, so it reports each published port as
// mock://<tenant name>/<container>:<port>, which no client takes for an
// address. A tenant with "listen": true gets a real listener per port on
// 127.0.0.1 (its host_port when set) that answers with a line naming the
// workload, HTTP over TCP and a datagram over UDP, kept across updates while
// the port stays and closed when the container crashes or the workload goes.
//
// It counts calls per tenant and operation, and can simulate out-of-band
// changes (a crashed container, a workload removed behind landlord's back).
// Workloads live in memory only: they do not survive the process, which is
// the one contract a mock cannot keep.
package mock
