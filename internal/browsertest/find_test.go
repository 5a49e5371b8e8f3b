package browsertest

import (
	"errors"
	"io/fs"
	"testing"
)

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		name        string
		env         string
		installed   []string
		want        string
		unavailable bool // the error is a skip
		fails       bool // the error is a failure
	}{
		{name: "first in PATH", installed: []string{"google-chrome", "chromium"}, want: "/bin/chromium"},
		{name: "later in PATH", installed: []string{"google-chrome-stable"}, want: "/bin/google-chrome-stable"},
		{name: "none", unavailable: true},
		{name: "variable", env: "chrome-dev", installed: []string{"chromium", "chrome-dev"}, want: "/bin/chrome-dev"},
		{name: "variable names nothing", env: "/nonexistent", installed: []string{"chromium"}, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == EnvBrowser {
					return tc.env
				}
				return ""
			}
			lookPath := func(name string) (string, error) {
				for _, n := range tc.installed {
					if n == name {
						return "/bin/" + n, nil
					}
				}
				return "", fs.ErrNotExist
			}
			got, err := find(getenv, lookPath)
			switch {
			case tc.unavailable || tc.fails:
				if err == nil || errors.Is(err, errUnavailable) != tc.unavailable {
					t.Fatalf("find = %q, %v; want an error that is errUnavailable: %t", got, err, tc.unavailable)
				}
			case err != nil || got != tc.want:
				t.Fatalf("find = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
