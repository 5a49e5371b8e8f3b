package tenant

import (
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// TestWindowTimeZones: a window's zone is an IANA name, or left out for
// UTC; "Local" and "localtime", which each landlord process reads from its
// own settings (so that the window opened at different times on different
// replicas), are refused at /maintenance_window/time_zone, saying what to
// do instead.
func TestWindowTimeZones(t *testing.T) {
	for _, tt := range []struct {
		zone string
		ok   bool
	}{
		{"", true},
		{"UTC", true},
		{"Europe/Berlin", true},
		{"Local", false},
		{"localtime", false},
		{"Mars/Olympus_Mons", false},
	} {
		t.Run(tt.zone, func(t *testing.T) {
			w := &Window{Start: "02:00", End: "04:00", TimeZone: tt.zone}
			vs := violation.Of(ValidateWindow(w))
			if tt.ok {
				if len(vs) != 0 {
					t.Fatalf("ValidateWindow(%q) = %v, want no problem", tt.zone, vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Pointer != "/maintenance_window/time_zone" || !strings.Contains(vs[0].Message, "Europe/Berlin") {
				t.Fatalf("ValidateWindow(%q) = %v, want one problem at /maintenance_window/time_zone naming an IANA zone", tt.zone, vs)
			}
			if _, err := wire.ParseWindow("daily 02:00-04:00 " + tt.zone); err == nil {
				t.Errorf("ParseWindow with zone %q: no error", tt.zone)
			}
		})
	}
	// A window stored before the rule stays valid, so that a rollout can
	// still move its tenant.
	tn := &Tenant{ID: NewID(), Name: "acme", Provider: "mock", ComputeConfig: []byte(`{}`),
		MaintenanceWindow: &Window{Start: "02:00", End: "04:00", TimeZone: "Local"}}
	if err := Validate(tn); err != nil {
		t.Errorf("Validate of a stored window in Local: %v", err)
	}
}

// TestWindowOpen: a window opens at start in its zone, closes at end (the
// next day when end is at or before start), on its days only.
func TestWindowOpen(t *testing.T) {
	wed := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) // a Wednesday, 13:00 in Berlin
	for _, tt := range []struct {
		name  string
		w     *Window
		open  bool
		opens time.Time
	}{
		{"no window", nil, true, time.Time{}},
		{"open", &Window{Start: "11:00", End: "13:00"}, true, time.Time{}},
		{"later today", &Window{Start: "14:00", End: "15:00"}, false, wed.Add(2 * time.Hour)},
		{"in Berlin", &Window{Start: "14:00", End: "15:00", TimeZone: "Europe/Berlin"}, false, wed.Add(time.Hour)},
		{"over midnight", &Window{Start: "22:00", End: "13:00"}, true, time.Time{}},
		{"saturday", &Window{Days: []string{"sat"}, Start: "02:00", End: "04:00"}, false, time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			open, opens := tt.w.Open(wed)
			if open != tt.open || !opens.Equal(tt.opens) {
				t.Errorf("Open = %v, %v; want %v, %v", open, opens, tt.open, tt.opens)
			}
		})
	}
}
