// Package process is a landlord compute provider that runs each tenant's
// containers as processes of the local machine: the container's image
// names an executable, its command and args are the executable's
// arguments, its env and secrets its environment, and each of its ports
// is a port of the machine, taken from a configured range and handed to
// the process as PORT (the first) and PORT_<NAME> (each). It suits edge
// boxes and development, and it is the SDK's example of a provider built
// out of landlord's tree, served as a plugin (see the module's main).
//
// What it writes lives in a directory per tenant under its state
// directory, named by the tenant's id: the state (what runs, its ports and
// the fingerprint of its spec) and each process's log. Processes are
// started in process groups of their own, so that they outlive the plugin:
// a restarted plugin (or landlord) finds them again by their pid and start
// time, and adopts them. A process that exits on its own with a status is
// restarted with backoff by the plugin that started it; one killed by a
// signal (an operator's kill) is left stopped, which the tenant's status
// and drift report, for landlord to repair.
//
// It reads /proc, so it runs on Linux only.
package process
