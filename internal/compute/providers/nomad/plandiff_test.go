package nomad

import "testing"

// Nomad's field names read as path elements, and its nanoseconds as
// durations.
func TestPathElementsAndValues(t *testing.T) {
	for in, want := range map[string]string{
		"MinHealthyTime": "min_healthy_time", "Dynamic Port": "dynamic_port", "MemoryMB": "memory_mb",
		"CPU": "cpu", "RestartPolicy": "restart_policy", "NodePool": "node_pool", "image": "image",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tt := range []struct{ name, v, want string }{
		{"MinHealthyTime", "500000000", "500ms"},
		{"Interval", "1000000000", "1s"},
		{"Count", "3", "3"},
		{"EmbeddedTmpl", string(make([]byte, 100)), string(make([]byte, 77)) + "..."},
	} {
		if got := readable(tt.name, tt.v); got != tt.want {
			t.Errorf("readable(%q, %q) = %q, want %q", tt.name, tt.v, got, tt.want)
		}
	}
}
