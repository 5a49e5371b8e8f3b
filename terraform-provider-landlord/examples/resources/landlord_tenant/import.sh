# A tenant is imported by its name or its id.
terraform import landlord_tenant.acme acme
