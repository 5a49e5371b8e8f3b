# The Nomad ACL policy of landlord's token (the nomad block's `token`, else
# NOMAD_TOKEN), in the namespace the block names (`namespace`, "default"
# unless set). Change the label "landlord" below to that namespace.
#
#   nomad namespace apply landlord
#   nomad acl policy apply -description "landlord tenant provisioning" landlord deploy/nomad/landlord-policy.hcl
#   nomad acl token create -name landlord -policy landlord
#
# Written from Nomad's documentation (the ACL policy specification and the
# ACL each HTTP endpoint lists), and proven by TestPolicyAllowsWhatLandlordDoes
# (internal/compute/providers/nomad/acl_test.go): on a v1.10.0 agent with
# ACLs on, a token with this file's policy runs the health check,
# Provision, the change watch, Inspect, an Update that puts back a scaled
# job and a purged Variable, and Destroy with no refusal.
#
# The health check needs no rule of its own: GET /v1/regions takes no ACL,
# and any capability in the namespace allows reading it. Tasks read their
# own Variables (nomad/jobs/<job>/tenant/<task>) through their workload
# identity, not through this token.

namespace "landlord" {
  capabilities = [
    # Finding a tenant known by id alone: GET /v1/jobs with a prefix, a
    # filter on the jobs' meta, and meta=true.
    "list-jobs",
    # GET /v1/job/:job_id, its allocations and its latest deployment, and
    # GET /v1/allocation/:alloc_id (the endpoints' host ports); the event
    # stream's Job, Deployment and Allocation topics.
    "read-job",
    # PUT /v1/job/:job_id/plan (before a register, and to compare the
    # live job with the spec for drift: a plan changes nothing),
    # PUT /v1/jobs (register), DELETE
    # /v1/job/:job_id (stop, then purge), and GET
    # /v1/client/allocation/:alloc_id/gc (a stopped tenant's containers).
    "submit-job",
  ]

  # The tenants' secret values: PUT /v1/var/:path (write; Nomad's
  # documentation also names read for it), GET /v1/var/:path (read: to
  # compare a Variable's items with the spec, as keyed digests), GET
  # /v1/vars with a prefix (list; also as a blocking query, which hears a
  # nomad var purge: the event stream has no topic for Variables), DELETE
  # /v1/var/:path (destroy).
  variables {
    path "nomad/jobs/*" {
      capabilities = ["write", "read", "list", "destroy"]
    }
  }
}
