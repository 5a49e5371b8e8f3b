package tenant

// SameDesiredPlacements reports whether a and b declare the same
// placements: the same names, providers and configs (compared by meaning),
// and the same removed, in the same order. Observed state is not compared.
// Stores use it to tell a write that changes only what the controller
// observed, which they write with fewer columns, from one that changes
// desired state.
func SameDesiredPlacements(a, b []Placement) bool { return samePlacements(a, b) }
