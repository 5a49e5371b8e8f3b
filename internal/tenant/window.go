package tenant

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/violation"
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

var weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// clock reads "HH:MM" as minutes from midnight.
func clock(s string) (int, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

// validateWindow checks a stored tenant's maintenance window.
func validateWindow(w *Window, errs *violation.List) {
	if w == nil {
		return
	}
	for i, d := range w.Days {
		if !slices.Contains(weekdays, d) {
			errs.Add(fmt.Sprintf("/maintenance_window/days/%d", i), "%s is not a day: use %s", violation.Quote(d), strings.Join(weekdays[1:], ", ")+", sun")
		}
	}
	if _, ok := clock(w.Start); !ok {
		errs.Add("/maintenance_window/start", "%s is not a time of day as HH:MM", violation.Quote(w.Start))
	}
	if _, ok := clock(w.End); !ok {
		errs.Add("/maintenance_window/end", "%s is not a time of day as HH:MM", violation.Quote(w.End))
	}
	if _, err := time.LoadLocation(w.TimeZone); err != nil {
		errs.Add("/maintenance_window/time_zone", "%s is not a known time zone (an IANA name such as Europe/Berlin)", violation.Quote(w.TimeZone))
	}
}

// ValidateWindow checks a maintenance window a request sets: as Validate
// does, and that its time zone is not one of each landlord process's own
// (see processZone). Validate lets a window stored before that rule keep
// such a zone, so that rollouts can still move its tenant.
func ValidateWindow(w *Window) error {
	var errs violation.List
	validateWindow(w, &errs)
	if w != nil && processZone(w.TimeZone) {
		errs.Add("/maintenance_window/time_zone", "%s is the time zone each landlord process is set to, which may differ from one to another: "+
			"name an IANA time zone such as Europe/Berlin, or leave time_zone out for UTC", violation.Quote(w.TimeZone))
	}
	return errs.Err(ErrInvalid)
}

// processZone reports whether time.LoadLocation reads a zone name from the
// settings of the process rather than from the zone database: "Local" (its
// TZ, else the host's zone), and "localtime" (the host's /etc/localtime, on
// most Linux systems). A window in such a zone would open at different
// times on different replicas.
func processZone(name string) bool {
	return name == "Local" || name == "localtime"
}

// Open reports whether the window is open at t, and when it next opens when
// it is not (the zero time when it never does: it cannot be read). A nil
// window is always open.
func (w *Window) Open(t time.Time) (bool, time.Time) {
	if w == nil {
		return true, time.Time{}
	}
	start, ok1 := clock(w.Start)
	end, ok2 := clock(w.End)
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
		if len(w.Days) > 0 && !slices.Contains(w.Days, weekdays[opens.Weekday()]) {
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

// String is the window as people read it: "sat,sun 02:00-05:00 Europe/Berlin".
func (w Window) String() string {
	days := "daily"
	if len(w.Days) > 0 {
		days = strings.Join(w.Days, ",")
	}
	tz := w.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	return fmt.Sprintf("%s %s-%s %s", days, w.Start, w.End, tz)
}

// ParseWindow reads a window as String writes it: "[DAYS|daily] HH:MM-HH:MM
// [ZONE]", where DAYS is a comma-separated list of mon … sun.
func ParseWindow(s string) (*Window, error) {
	fields := strings.Fields(s)
	w := &Window{}
	if len(fields) > 0 && !strings.Contains(fields[0], ":") {
		if fields[0] != "daily" {
			w.Days = strings.Split(fields[0], ",")
		}
		fields = fields[1:]
	}
	if len(fields) == 0 || len(fields) > 2 {
		return nil, fmt.Errorf("%w: maintenance window %s is not [DAYS] HH:MM-HH:MM [TIME_ZONE]", ErrInvalid, violation.Quote(s))
	}
	var ok bool
	if w.Start, w.End, ok = strings.Cut(fields[0], "-"); !ok {
		return nil, fmt.Errorf("%w: maintenance window %s has no HH:MM-HH:MM", ErrInvalid, violation.Quote(s))
	}
	if len(fields) == 2 {
		w.TimeZone = fields[1]
	}
	if err := ValidateWindow(w); err != nil {
		return nil, err
	}
	return w, nil
}

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
