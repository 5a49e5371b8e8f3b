package wire

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// weekdays are the days a maintenance window names, in the order of
// time.Weekday.
var weekdays = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// dayList is the days in the week's order from Monday, for messages.
const dayList = "mon, tue, wed, thu, fri, sat, sun"

// WindowDay is how a maintenance window names day d: "mon" … "sun".
func WindowDay(d time.Weekday) string { return weekdays[d] }

// ParseTimeOfDay reads a window's start or end, "HH:MM" on a 24-hour
// clock, as minutes from midnight; false when s is not one.
func ParseTimeOfDay(s string) (int, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

// String is the window as people read it and ParseWindow reads it:
// "sat,sun 02:00-05:00 Europe/Berlin", "daily 01:00-02:00 UTC".
func (w MaintenanceWindow) String() string {
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

// ParseWindow reads a window as String writes it: "[DAYS|daily]
// HH:MM-HH:MM [ZONE]", where DAYS is a comma-separated list of mon … sun,
// and checks it as Problems does. A window that reads but breaks a rule is
// a *WindowError listing every problem.
func ParseWindow(s string) (*MaintenanceWindow, error) {
	fields := strings.Fields(s)
	w := &MaintenanceWindow{}
	if len(fields) > 0 && !strings.Contains(fields[0], ":") {
		if fields[0] != "daily" {
			w.Days = strings.Split(fields[0], ",")
		}
		fields = fields[1:]
	}
	if len(fields) == 0 || len(fields) > 2 {
		return nil, fmt.Errorf("maintenance window %s is not [DAYS] HH:MM-HH:MM [TIME_ZONE]", Quote(s))
	}
	var ok bool
	if w.Start, w.End, ok = strings.Cut(fields[0], "-"); !ok {
		return nil, fmt.Errorf("maintenance window %s has no HH:MM-HH:MM", Quote(s))
	}
	if len(fields) == 2 {
		w.TimeZone = fields[1]
	}
	if ps := w.Problems(); len(ps) > 0 {
		slices.SortStableFunc(ps, func(a, b FieldError) int { return strings.Compare(a.Pointer, b.Pointer) })
		return nil, &WindowError{Window: s, Problems: ps}
	}
	return w, nil
}

// WindowError is a window ParseWindow read but that breaks the rules of
// Problems, with every problem, in the order of their pointers.
type WindowError struct {
	Window   string
	Problems []FieldError
}

func (e *WindowError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Pointer + ": " + p.Message
	}
	return fmt.Sprintf("maintenance window %s: %s", Quote(e.Window), strings.Join(msgs, "; "))
}

// Problems lists what is wrong with a window a request sets, each at the
// JSON pointer of its field within the window ("/start"): the rules of
// StoredProblems, and a time zone that is not one of each landlord
// process's own.
func (w MaintenanceWindow) Problems() []FieldError {
	ps := w.StoredProblems()
	if processZone(w.TimeZone) {
		ps = append(ps, FieldError{Pointer: "/time_zone", Message: Quote(w.TimeZone) + " is the time zone each landlord process is set to, which may differ from one to another: " +
			"name an IANA time zone such as Europe/Berlin, or leave time_zone out for UTC"})
	}
	return ps
}

// StoredProblems lists what is wrong with a stored window: days that are
// not mon … sun, a start or end that is not HH:MM, an unknown time zone.
// It lets a window stored before the rule on the process's zone keep such
// a zone, so that rollouts can still move its tenant.
func (w MaintenanceWindow) StoredProblems() []FieldError {
	var ps []FieldError
	for i, d := range w.Days {
		if !slices.Contains(weekdays[:], d) {
			ps = append(ps, FieldError{Pointer: fmt.Sprintf("/days/%d", i), Message: fmt.Sprintf("%s is not a day: use %s", Quote(d), dayList)})
		}
	}
	if _, ok := ParseTimeOfDay(w.Start); !ok {
		ps = append(ps, FieldError{Pointer: "/start", Message: Quote(w.Start) + " is not a time of day as HH:MM"})
	}
	if _, ok := ParseTimeOfDay(w.End); !ok {
		ps = append(ps, FieldError{Pointer: "/end", Message: Quote(w.End) + " is not a time of day as HH:MM"})
	}
	if _, err := time.LoadLocation(w.TimeZone); err != nil {
		ps = append(ps, FieldError{Pointer: "/time_zone", Message: Quote(w.TimeZone) + " is not a known time zone (an IANA name such as Europe/Berlin)"})
	}
	return ps
}

// processZone reports whether time.LoadLocation reads a zone name from the
// settings of the process rather than from the zone database: "Local" (its
// TZ, else the host's zone), and "localtime" (the host's /etc/localtime, on
// most Linux systems). A window in such a zone would open at different
// times on different replicas.
func processZone(name string) bool {
	return name == "Local" || name == "localtime"
}
