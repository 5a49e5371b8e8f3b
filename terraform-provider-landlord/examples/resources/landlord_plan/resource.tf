resource "landlord_plan" "standard" {
  name             = "standard"
  compute_provider = "docker"
  description      = "The standard tier: one app container, half a core."
}
