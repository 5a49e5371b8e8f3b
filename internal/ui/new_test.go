package ui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/ui"
)

// TestNewNeedsSessions: a console that could not end sessions everywhere
// is refused at start-up, not run with sign-out that leaves copied cookies
// valid.
func TestNewNeedsSessions(t *testing.T) {
	_, err := ui.New(ui.Options{API: http.NotFoundHandler(), SessionKey: make([]byte, 32)})
	if err == nil || !strings.Contains(err.Error(), "Options.Sessions") {
		t.Fatalf("New without Sessions: %v; want an error naming Options.Sessions", err)
	}
}
