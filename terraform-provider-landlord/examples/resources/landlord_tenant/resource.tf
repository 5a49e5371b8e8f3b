variable "acme_db_password" {
  description = "Acme's database password: given to the tenant, never kept in Terraform's state."
  type        = string
  sensitive   = true
}

resource "landlord_tenant" "acme" {
  name = "acme"

  # Written as JSON: key order, spacing and the provider's defaults make no diff.
  compute_config = jsonencode({
    compute_provider = "docker"
    image            = "ghcr.io/example/app:1.4.2"
    ports = [
      { name = "http", container_port = 8080 },
    ]
    env = {
      LOG_LEVEL = "info"
    }
    resources = {
      cpu_millicores = 500
      memory_mib     = 256
    }
  })

  # Secrets go here, never in compute_config: each key is a JSON pointer to
  # where the secret goes in compute_config. Terraform does not store them;
  # change secrets_wo_version to send changed values.
  secrets_wo = {
    "/secrets/DB_PASSWORD" = var.acme_db_password
  }
  secrets_wo_version = 1

  labels = {
    tier = "gold"
  }

  # Rollouts change the tenant only on weekend nights, Paris time.
  maintenance_window = {
    days      = ["sat", "sun"]
    start     = "02:00"
    end       = "06:00"
    time_zone = "Europe/Paris"
  }

  timeouts = {
    create = "10m"
  }
}

output "acme_endpoints" {
  value = landlord_tenant.acme.endpoints
}
