package ui

import "regexp"

// History names who made each change. An API caller is recorded by their
// name; landlord's own processes by their identity, which reads as noise
// ("vm:KCJGP3:28280"), so the console says what wrote it instead:
// "controller (replica vm:KCJGP3:28280)" or "rollout driver (replica …)".
//
// A replica's identity is controller.Options.Identity's default,
// "<hostname>:<six base32 characters>:<pid>", which landlord serve also
// gives its rollout driver; a driver run alone defaults to
// "rollouts@<hostname>:<pid>" (rollout.Options.Identity). A tenant's
// "updated" event written under a replica's identity is a rollout moving
// the tenant (the controller records statuses, attempts, drift and
// pauses, never a change of the desired state); every other event of a
// replica is its controller's. Every event of a rollout's own history
// that a replica wrote is its driver's.
var (
	replicaIdentity = regexp.MustCompile(`^[^\s:]*:[A-Z2-7]{6}:[0-9]+$`)
	driverIdentity  = regexp.MustCompile(`^rollouts@([^\s:]+:[0-9]+)$`)
)

// tenantActor is how a tenant's history names the actor of an event of
// type typ.
func tenantActor(typ, actor string) string {
	switch replica, driver := writer(actor); {
	case driver:
		return "rollout driver (replica " + replica + ")"
	case replica == "":
		return actor
	case typ == "updated":
		return "rollout driver (replica " + replica + ")"
	default:
		return "controller (replica " + replica + ")"
	}
}

// rolloutActor is how a rollout's history names the actor of an event.
func rolloutActor(actor string) string {
	if replica, _ := writer(actor); replica != "" {
		return "rollout driver (replica " + replica + ")"
	}
	return actor
}

// writer returns the replica whose identity actor is, "" when it is an
// API caller's name; driver says the identity is a lone rollout driver's.
func writer(actor string) (replica string, driver bool) {
	if m := driverIdentity.FindStringSubmatch(actor); m != nil {
		return m[1], true
	}
	if replicaIdentity.MatchString(actor) {
		return actor, false
	}
	return "", false
}
