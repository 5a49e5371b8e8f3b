# By name; or give id instead.
data "landlord_tenant" "acme" {
  name = "acme"
}

output "acme_status" {
  value = data.landlord_tenant.acme.status
}

output "acme_image" {
  value = jsondecode(data.landlord_tenant.acme.compute_config).image
}

output "acme_addresses" {
  value = [for e in data.landlord_tenant.acme.endpoints : e.address]
}
