package violation_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/sdk/violation"
)

var errKind = errors.New("invalid thing")

func TestListErr(t *testing.T) {
	var l violation.List
	if err := l.Err(errKind); err != nil {
		t.Fatalf("empty list: Err = %v, want nil", err)
	}
	l.Add("/b", "is %s", "wrong")
	l.Add("", "is empty")
	l.Add("/a/0", "must be a number")
	l.Add("/b", "is wrong")
	err := l.Err(errKind)
	if !errors.Is(err, errKind) {
		t.Fatalf("Err does not wrap its kind: %v", err)
	}
	if got, want := err.Error(), "invalid thing: is empty; /a/0: must be a number; /b: is wrong"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	want := []violation.Violation{{"", "is empty"}, {"/a/0", "must be a number"}, {"/b", "is wrong"}}
	if diff := cmp.Diff(want, violation.Of(err)); diff != "" {
		t.Errorf("Of (-want +got):\n%s", diff)
	}
	if l[0].Pointer != "/b" {
		t.Error("Err sorted the list it was called on")
	}
	if got := violation.Of(errors.New("plain")); got != nil {
		t.Errorf("Of(plain error) = %v, want nil", got)
	}
}

func TestPrefixed(t *testing.T) {
	e := violation.New(errKind, "/image", "is required").Prefixed("/compute_config")
	if got := violation.Of(e)[0].Pointer; got != "/compute_config/image" {
		t.Errorf("pointer = %q", got)
	}
	if !errors.Is(e, errKind) {
		t.Error("Prefixed lost the kind")
	}
}

func TestPointer(t *testing.T) {
	for _, c := range []struct {
		tokens []string
		want   string
	}{
		{nil, ""},
		{[]string{"a"}, "/a"},
		{[]string{"a/b", "m~n", "0"}, "/a~1b/m~0n/0"},
		{[]string{"~/"}, "/~0~1"},
	} {
		if got := violation.Pointer(c.tokens...); got != c.want {
			t.Errorf("Pointer(%q) = %q, want %q", c.tokens, got, c.want)
		}
	}
}

func TestEscapeRoundTrip(t *testing.T) {
	for token, escaped := range map[string]string{"plain": "plain", "a/b": "a~1b", "m~n": "m~0n", "~1": "~01", "/~": "~1~0"} {
		if got := violation.Escape(token); got != escaped {
			t.Errorf("Escape(%q) = %q, want %q", token, got, escaped)
		}
		if got := violation.Unescape(escaped); got != token {
			t.Errorf("Unescape(%q) = %q, want %q", escaped, got, token)
		}
	}
}
