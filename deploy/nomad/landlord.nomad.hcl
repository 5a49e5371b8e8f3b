# landlord as a Nomad job, from its release image (tools/releaser; push it
# to a registry the clients reach). Tenants run on Nomad through the same
# agent (the nomad provider), or on any other provider the configuration
# below enables.
#
# Its secrets come from the Nomad Variable nomad/jobs/landlord, which the
# job's tasks read through their workload identity:
#
#   nomad var put nomad/jobs/landlord admin_token=$(openssl rand -hex 32) \
#     tls_crt=@tls.crt tls_key=@tls.key nomad_token=<a token of landlord-policy.hcl>
#
# (database_url=postgres://… too, for several replicas; without it the
# database is SQLite in the allocation's sticky disk, one replica only).
#
#   nomad job run -var image=registry.example/landlord:v1.2.3 deploy/nomad/landlord.nomad.hcl
#
# Proven by TestNomadJob (deploy/nomad_job_test.go): on a Nomad v1.10.0 agent, landlord
# runs from its image with this file, its check on /readyz passes over
# HTTPS, and it provisions a tenant on the same agent.

variable "image" {
  type        = string
  description = "landlord's release image"
}

variable "port" {
  type        = number
  default     = 8443
  description = "the API's port on the client (static, for clients of the API to find)"
}

variable "nomad_addr" {
  type        = string
  default     = ""
  description = "the Nomad API the nomad provider drives; default the agent of the client landlord runs on, at its address (attr.unique.network.ip-address) on port 4646"
}

variable "datacenters" {
  type    = list(string)
  default = ["*"]
}

variable "count" {
  type        = number
  default     = 1
  description = "replicas; more than one needs database_url (PostgreSQL) in the Variable"
}

job "landlord" {
  datacenters = var.datacenters
  type        = "service"

  group "landlord" {
    count = var.count

    network {
      port "https" {
        static = var.port
      }
    }

    # SQLite's file survives a restart and an update in place on the same
    # client (sticky), and moves with the allocation (migrate).
    ephemeral_disk {
      size    = 500
      sticky  = true
      migrate = true
    }

    # One replica at a time, each healthy (its /readyz check) before the
    # next: old and new versions serve side by side during the update.
    update {
      max_parallel     = 1
      min_healthy_time = "10s"
      healthy_deadline = "3m"
      auto_revert      = true
    }

    service {
      provider = "nomad"
      name     = "landlord"
      port     = "https"

      check {
        type            = "http"
        protocol        = "https"
        tls_skip_verify = true
        path            = "/readyz"
        interval        = "5s"
        timeout         = "2s"
      }
    }

    task "landlord" {
      driver = "docker"

      config {
        image = var.image
        args  = ["serve"]
        # The agent's own API on its loopback, and the tenants' ports
        # probed where the clients publish them.
        network_mode    = "host"
        readonly_rootfs = true
        cap_drop        = ["all"]
        security_opt    = ["no-new-privileges"]
        mount {
          type     = "tmpfs"
          target   = "/tmp"
          readonly = false
          tmpfs_options {
            size = 67108864
          }
        }
      }

      # In-flight work gets the controller's shutdown_timeout (30s).
      kill_timeout = "45s"

      env {
        LANDLORD_CONFIG = "${NOMAD_TASK_DIR}/landlord.yaml"
        LANDLORD_LISTEN = "0.0.0.0:${NOMAD_PORT_https}"
      }

      template {
        destination = "local/landlord.yaml"
        data        = <<-EOT
          tls:
            cert_file: {{ env "NOMAD_SECRETS_DIR" }}/tls.crt
            key_file: {{ env "NOMAD_SECRETS_DIR" }}/tls.key
          {{- with nomadVar "nomad/jobs/landlord" }}{{ if not .database_url }}
          database:
            driver: sqlite
            path: {{ env "NOMAD_ALLOC_DIR" }}/data/landlord.db
          {{- end }}{{ end }}
          compute:
            default: nomad
            nomad:
              address: ${var.nomad_addr != "" ? var.nomad_addr : "http://{{ env \"attr.unique.network.ip-address\" }}:4646"}
        EOT
      }

      template {
        destination = "secrets/tls.crt"
        perms       = "0400"
        uid         = 65532 # the image's user
        gid         = 65532
        data        = "{{ with nomadVar \"nomad/jobs/landlord\" }}{{ .tls_crt }}{{ end }}"
        change_mode = "noop" # landlord reads a renewed pair on the next handshake
      }

      template {
        destination = "secrets/tls.key"
        perms       = "0400"
        uid         = 65532
        gid         = 65532
        data        = "{{ with nomadVar \"nomad/jobs/landlord\" }}{{ .tls_key }}{{ end }}"
        change_mode = "noop"
      }

      template {
        destination = "secrets/landlord.env"
        env         = true
        perms       = "0400"
        uid         = 65532
        gid         = 65532
        data        = <<-EOT
          {{- with nomadVar "nomad/jobs/landlord" }}
          LANDLORD_ADMIN_TOKEN={{ .admin_token }}
          {{- if .database_url }}
          LANDLORD_DATABASE={{ .database_url }}
          {{- end }}
          {{- if .nomad_token }}
          NOMAD_TOKEN={{ .nomad_token }}
          {{- end }}
          {{- end }}
        EOT
      }

      resources {
        cpu    = 200
        memory = 256
      }
    }
  }
}
