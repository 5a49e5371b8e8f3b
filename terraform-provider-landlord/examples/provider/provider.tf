terraform {
  required_providers {
    landlord = {
      source = "jaxxstorm/landlord"
    }
  }
}

variable "landlord_token" {
  description = "A writer's bearer token for landlord's API."
  type        = string
  sensitive   = true
}

# Each setting left out is read from the environment variable the landlord
# CLI reads: LANDLORD_ADDR, LANDLORD_TOKEN, LANDLORD_CA_CERT,
# LANDLORD_CLIENT_CERT, LANDLORD_CLIENT_KEY and LANDLORD_TLS_SERVER_NAME.
# With those set, the block may be empty.
provider "landlord" {
  address = "https://landlord.example.com"
  token   = var.landlord_token
}
