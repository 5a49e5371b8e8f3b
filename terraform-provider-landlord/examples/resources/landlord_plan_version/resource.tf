resource "landlord_plan" "standard" {
  name             = "standard"
  compute_provider = "docker"
}

# Publishing changes no tenant: rollouts move the plan's tenants to it.
# A change of config or message publishes a new version, and the one it
# replaces stays in the plan's history.
resource "landlord_plan_version" "standard" {
  plan = landlord_plan.standard.name
  config = jsonencode({
    image = "ghcr.io/example/app:1.5.0"
    ports = [
      { name = "http", container_port = 8080 },
    ]
    resources = {
      cpu_millicores = 500
      memory_mib     = 256
    }
  })
  message = "app 1.5.0"
}
