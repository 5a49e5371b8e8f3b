package wire

// Page sizes of the API's lists: the page_size a list takes when none is
// given, and the most it accepts.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// MaxWaves is the most waves a rollout's spec may give. A wave is a step
// the operator watches and bakes; a rollout of more would take longer to
// walk through than to change its tenants, and its status would grow with
// each.
const MaxWaves = 100
