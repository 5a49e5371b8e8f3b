terraform {
  required_version = ">= 1.11" # write-only attributes (secrets_wo)
  required_providers {
    landlord = {
      source = "jaxxstorm/landlord"
    }
  }
}

variable "landlord_address" {
  type    = string
  default = "http://127.0.0.1:8080"
}

variable "image" {
  type    = string
  default = "landlord.local/demo:local" # landlord demo image builds it
}

variable "db_password" {
  type      = string
  sensitive = true
  ephemeral = true # never in the plan or the state
}

provider "landlord" {
  address = var.landlord_address
  # token: LANDLORD_TOKEN; TLS: ca_cert_file, client_cert_file, client_key_file
}

# What the default compute provider takes and can do.
data "landlord_compute_provider" "default" {}

# A plan: the config its tenants share, versioned.
resource "landlord_plan" "standard" {
  name        = "standard"
  description = "the usual tier"
}

resource "landlord_plan_version" "standard" {
  plan = landlord_plan.standard.name
  config = jsonencode({
    image = var.image
    ports = [{ container_port = 8080 }]
    env   = { TIER = "standard" }
  })
  message = "managed by terraform"
}

# A tenant on the plan, pinned at its version: a new version of the plan
# moves it when the pin moves (here, with the version resource).
resource "landlord_tenant" "acme" {
  name           = "acme"
  plan           = landlord_plan.standard.name
  pin            = landlord_plan_version.standard.version
  compute_config = jsonencode({ args = ["acme"] })
  labels         = { tier = "standard", region = "eu" }
  maintenance_window = {
    days  = ["sat", "sun"]
    start = "02:00"
    end   = "06:00"
  }
}

# A tenant of its own config, with a secret that Terraform never stores.
resource "landlord_tenant" "globex" {
  name = "globex"
  compute_config = jsonencode({
    image = var.image
    args  = ["globex"]
    ports = [{ container_port = 8080 }]
    env   = { GREETING = "hello" }
  })
  secrets_wo         = { "/secrets/DB_PASSWORD" = var.db_password }
  secrets_wo_version = 1 # change it with the password to send it again
  annotations        = { owner = "team-globex" }
  timeouts           = { create = "5m" }
}

output "endpoints" {
  value = {
    acme   = landlord_tenant.acme.endpoints[*].address
    globex = landlord_tenant.globex.endpoints[*].address
  }
}

output "provider_capabilities" {
  value = data.landlord_compute_provider.default.capabilities
}
