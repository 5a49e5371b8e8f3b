# Left out, name is landlord's default provider.
data "landlord_compute_provider" "docker" {
  name = "docker"
}

output "docker_capabilities" {
  value = data.landlord_compute_provider.docker.capabilities
}

# The compute_config fields the provider accepts, from its JSON Schema.
output "docker_config_fields" {
  value = keys(jsondecode(data.landlord_compute_provider.docker.schema).properties)
}

# The defaults landlord merges under each tenant's compute_config, as JSON;
# null when the provider has none.
output "docker_defaults" {
  value = data.landlord_compute_provider.docker.defaults
}
