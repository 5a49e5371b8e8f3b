package service_test

import (
	"errors"
	"testing"

	"github.com/jaxxstorm/landlord/internal/service"
)

// TestErrorKeepsItsCause: a refusal's text, which the log shows, holds
// the cause it words as well as the words the user reads.
func TestErrorKeepsItsCause(t *testing.T) {
	cause := errors.New("sqlite: publish version: constraint failed")
	for _, tc := range []struct {
		err  *service.Error
		want string
	}{
		{&service.Error{Detail: "the store refused this version", Err: cause}, "the store refused this version: sqlite: publish version: constraint failed"},
		{&service.Error{Err: cause}, cause.Error()},
		{&service.Error{Detail: "the name is not valid"}, "the name is not valid"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if tc.err.Err != nil && !errors.Is(tc.err, cause) {
			t.Errorf("%v does not wrap its cause", tc.err)
		}
	}
}
