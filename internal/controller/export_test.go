package controller

// Backoff is backoff, for tests.
var Backoff = backoff

// WithoutOwnID is withoutOwnID, for tests.
var WithoutOwnID = withoutOwnID

// Worked lists the partitions c works now.
func Worked(c *Controller) []int {
	r := c.current.Load()
	if r == nil {
		return nil
	}
	var out []int
	for p := range r.parts {
		if r.parts[p].Load() != nil {
			out = append(out, p)
		}
	}
	return out
}
