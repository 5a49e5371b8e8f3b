package tenant

import (
	"slices"
	"time"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// Window is a weekly maintenance window: rollouts change a tenant only while
// its window is open. It opens at Start on each of Days, in TimeZone, and
// closes at End; an End at or before Start closes on the next day (a
// window from 22:00 to 02:00).
type Window struct {
	// Days are the days the window opens, "mon" to "sun"; empty is every
	// day.
	Days []string `json:"days,omitempty"`
	// Start and End are times of day, "HH:MM" (24-hour).
	Start string `json:"start"`
	End   string `json:"end"`
	// TimeZone is an IANA time zone name ("Europe/Berlin"); empty is UTC.
	TimeZone string `json:"time_zone,omitempty"`
}

// validateWindow checks a stored tenant's maintenance window, by wire's
// rules (wire.MaintenanceWindow.StoredProblems): a client checks a window
// it sends by the same rules.
func validateWindow(w *Window, errs *violation.List) {
	if w != nil {
		addWindowProblems(wire.MaintenanceWindow(*w).StoredProblems(), errs)
	}
}

// ValidateWindow checks a maintenance window a request sets: as Validate
// does, and that its time zone is not one of each landlord process's own
// (wire.MaintenanceWindow.Problems). Validate lets a window stored before
// that rule keep such a zone, so that rollouts can still move its tenant.
func ValidateWindow(w *Window) error {
	var errs violation.List
	if w != nil {
		addWindowProblems(wire.MaintenanceWindow(*w).Problems(), &errs)
	}
	return errs.Err(ErrInvalid)
}

// addWindowProblems adds the problems of a tenant's window, each at its
// pointer within the tenant.
func addWindowProblems(ps []wire.FieldError, errs *violation.List) {
	for _, p := range ps {
		errs.Add("/maintenance_window"+p.Pointer, "%s", p.Message)
	}
}

// Open reports whether the window is open at t, and when it next opens when
// it is not (the zero time when it never does: it cannot be read). A nil
// window is always open.
func (w *Window) Open(t time.Time) (bool, time.Time) {
	if w == nil {
		return true, time.Time{}
	}
	start, ok1 := wire.ParseTimeOfDay(w.Start)
	end, ok2 := wire.ParseTimeOfDay(w.End)
	loc, err := time.LoadLocation(w.TimeZone)
	if !ok1 || !ok2 || err != nil {
		return false, time.Time{}
	}
	length := end - start
	if length <= 0 {
		length += 24 * 60
	}
	local := t.In(loc)
	// The opening that may contain t began today or yesterday; the next
	// one is within the coming week.
	for day := -1; day <= 7; day++ {
		y, m, d := local.Date()
		opens := time.Date(y, m, d+day, start/60, start%60, 0, 0, loc)
		if len(w.Days) > 0 && !slices.Contains(w.Days, wire.WindowDay(opens.Weekday())) {
			continue
		}
		closes := opens.Add(time.Duration(length) * time.Minute)
		if !t.Before(opens) && t.Before(closes) {
			return true, time.Time{}
		}
		if opens.After(t) {
			return false, opens
		}
	}
	return false, time.Time{}
}

// String is the window as people read it: "sat,sun 02:00-05:00
// Europe/Berlin", as wire.MaintenanceWindow writes it.
func (w Window) String() string { return wire.MaintenanceWindow(w).String() }

func sameWindow(a, b *Window) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Days, b.Days) && a.Start == b.Start && a.End == b.End && a.TimeZone == b.TimeZone
}

func cloneWindow(w *Window) *Window {
	if w == nil {
		return nil
	}
	c := *w
	c.Days = slices.Clone(w.Days)
	return &c
}
