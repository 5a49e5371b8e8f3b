package client

import "slices"

// Providers returns the compute providers of t: those of its placements,
// each once, in the placements' order, leaving out placements being
// removed; for a tenant without placements (or with only placements
// being removed), its ComputeProvider. It is what a tenant "runs on", as
// landlord list and the console show it, joined with "+".
func Providers(t Tenant) []string {
	var out []string
	for _, p := range t.Placements {
		if !p.Removed && !slices.Contains(out, p.ComputeProvider) {
			out = append(out, p.ComputeProvider)
		}
	}
	if len(out) == 0 {
		return []string{t.ComputeProvider}
	}
	return out
}
