# A plan version is imported as <plan>/<version>.
terraform import landlord_plan_version.standard standard/3
