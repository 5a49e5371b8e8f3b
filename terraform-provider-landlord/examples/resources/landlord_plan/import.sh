# A plan is imported by its name.
terraform import landlord_plan.standard standard
