// Package nomad runs each tenant as one Nomad service job with one task
// group ("tenant") and a task per container; secret values live in a
// Nomad Variable per task (nomad/jobs/<job>/tenant/<task>), which the
// task renders into its environment through a template.
//
// Drift. Inspect compares the live job with the job landlord would
// register, through Nomad's own plan with its diff (both sides
// canonicalised, so the defaults Nomad fills in are never drift), and
// each Variable's items with the spec's secret values through keyed
// digests (a value is never kept or shown). The paths: job/count,
// job/status (a stopped job), containers/<task>/{image,command,args,
// env/<KEY>,secrets/<KEY>,ports,labels,template,resources/...,
// health_check}, service/<name>, job/{meta/<key>,datacenters,
// constraints,node_pool,update/...,restart/...,scaling/...,network/...},
// variable/<task> (missing, as after nomad var purge, or one no task
// should have). Update and Provision put back what differs: the job is
// registered again when it differs, the Variables written again when
// only they do (a task waiting for its template then renders by itself).
// At rest Inspect costs reads only: a plan is made again only when the
// job's JobModifyIndex or the spec changed, a Variable read again only
// when its ModifyIndex changed.
//
// Watching. WatchChanges follows the event stream's Job, Deployment and
// Allocation topics, and, since the stream has no topic for Variables, a
// blocking query on the list of landlord's Variables, which answers within
// milliseconds of a purge.
//
// Status. Endpoints are the host ports of the allocations of the job's
// current version that Nomad wants running (desired status run) and whose
// tasks all run; an allocation being stopped, evicted or replaced, and one
// still pending (waiting for its template, say), serves nothing.
package nomad
