package pgtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRequireServer(t *testing.T) {
	for _, tc := range []struct {
		value    string
		required bool
		wantErr  bool
	}{
		{value: "", required: false},
		{value: "0", required: false},
		{value: "false", required: false},
		{value: "1", required: true},
		{value: "true", required: true},
		{value: "yes", required: true, wantErr: true},
	} {
		t.Run(fmt.Sprintf("%q", tc.value), func(t *testing.T) {
			required, err := requireServer(env(tc.value))
			if required != tc.required || (err != nil) != tc.wantErr {
				t.Errorf("requireServer = %v, %v; want %v, error %v", required, err, tc.required, tc.wantErr)
			}
		})
	}
}

func TestReport(t *testing.T) {
	missing := unavailable(errors.New("looked for initdb and found none"))
	for _, tc := range []struct {
		name     string
		err      error
		require  string
		wantSkip bool
		want     []string // in the message
	}{
		{name: "missing server skips", err: missing, wantSkip: true,
			want: []string{"found none", "apt-get install postgresql-15", EnvURL, EnvRequire + "=1 makes this a failure"}},
		{name: "missing server skips when not required", err: missing, require: "0", wantSkip: true},
		{name: "missing server fails when required", err: missing, require: "1",
			want: []string{"found none", "apt-get install postgresql-15", EnvRequire + " is set"}},
		{name: "wrapped missing server skips", err: fmt.Errorf("start: %w", missing), wantSkip: true},
		{name: "typo in the switch fails", err: missing, require: "yes",
			want: []string{"found none", `LANDLORD_REQUIRE_POSTGRES="yes" is not a boolean`}},
		{name: "other errors fail", err: errors.New("CREATE DATABASE: disk full"),
			want: []string{"disk full"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recordingTB{}
			report(r, env(tc.require), tc.err)
			msg := r.fatal
			if tc.wantSkip {
				msg = r.skipped
			}
			if (r.skipped != "") != tc.wantSkip || (r.fatal != "") == tc.wantSkip {
				t.Fatalf("skipped %q, failed %q; want skip: %v", r.skipped, r.fatal, tc.wantSkip)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

// env returns a getenv with EnvRequire set to value.
func env(value string) func(string) string {
	return func(name string) string {
		if name == EnvRequire {
			return value
		}
		return ""
	}
}

// recordingTB records what report does to a test instead of doing it.
type recordingTB struct {
	testing.TB
	skipped, fatal string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

func (r *recordingTB) Fatal(args ...any) { r.fatal = fmt.Sprint(args...) }

func (r *recordingTB) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
