package main

import (
	"io"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

// Tables cut long messages only on a terminal, ending them in …; written
// to a file or a pipe they are whole.
func TestTablesCutOnlyOnATerminal(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	mustRunCLI(t, srv, exitFailure, "", "create", "broken", "--config", `{"image":"a","x-mock":{"fail":"terminal"}}`, "--wait", "--timeout", "30s")
	tn := mustTenantJSON(t, mustRunCLI(t, srv, exitOK, "", "get", "broken", "-o", "json").stdout)
	var history client.EventList
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "history", "broken", "-o", "json").stdout, &history)
	var attempt string
	for _, e := range history.Events {
		if e.Type == "attempt_failed" {
			attempt = e.Message
		}
	}
	if len(tn.StatusMessage) <= maxMessageCols || len(attempt) <= 100 {
		t.Fatalf("messages too short to be cut: %q, %q", tn.StatusMessage, attempt)
	}

	t.Run("pipe", func(t *testing.T) {
		mustContain(t, "list", mustRunCLI(t, srv, exitOK, "", "list").stdout, tn.StatusMessage+"\n")
		mustContain(t, "history", mustRunCLI(t, srv, exitOK, "", "history", "broken").stdout, attempt+"\n")
	})
	t.Run("terminal", func(t *testing.T) {
		defer func(f func(io.Writer) int) { terminalWidth = f }(terminalWidth)
		terminalWidth = func(io.Writer) int { return 200 }
		list := mustRunCLI(t, srv, exitOK, "", "list").stdout
		mustContain(t, "list", list, tn.StatusMessage[:maxMessageCols-1]+"…\n")
		history := mustRunCLI(t, srv, exitOK, "", "history", "broken").stdout
		mustContain(t, "history", history, attempt[:99]+"…\n")
		for _, line := range strings.Split(list, "\n") {
			if n := len([]rune(line)); n > 199 {
				t.Errorf("a line of %d columns on a terminal of 200:\n%s", n, line)
			}
		}
	})
}
