package controller_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/controller"
)

// The default identity differs between two processes with one hostname and
// pid (containers given one hostname, each its pid 1), and ends in the pid,
// which the load tool reads.
func TestDefaultIdentity(t *testing.T) {
	a := controller.Options{}.WithDefaults().Identity
	b := controller.Options{}.WithDefaults().Identity
	if a == b {
		t.Errorf("two defaulted identities are both %q", a)
	}
	host, _ := os.Hostname()
	for _, id := range []string{a, b} {
		if !strings.HasPrefix(id, host+":") || !strings.HasSuffix(id, ":"+strconv.Itoa(os.Getpid())) {
			t.Errorf("identity %q is not <hostname>:<random>:<pid>", id)
		}
	}
	if got := (controller.Options{Identity: "replica-a"}).WithDefaults().Identity; got != "replica-a" {
		t.Errorf("the identity given became %q", got)
	}
}
