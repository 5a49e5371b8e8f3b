package wire

// Keys that choose a tenant's provider, looked up in this order in the
// compute_config, then the labels, then the annotations: SelectionKey
// names an enabled provider, SelectionKeyType a type of provider.
const (
	SelectionKey     = "compute_provider"
	SelectionKeyType = "compute_provider_type"
)

// RedactedValue stands for a secret value in the API's answers (and the
// server's logs). A request that sends it back for a secret keeps the
// stored secret.
const RedactedValue = "[redacted]"
