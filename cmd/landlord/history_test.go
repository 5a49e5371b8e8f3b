package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestHistory(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	mustRunCLI(t, srv, exitOK, "", "create", "acme", "--config", "image: a", "--wait", "--timeout", "30s")

	res := mustRunCLI(t, srv, exitOK, "", "history", "acme")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "AGE") || !strings.Contains(lines[1], " created ") {
		t.Fatalf("history:\n%s", res.stdout)
	}
	mustContain(t, "history", res.stdout, "requested → provisioning", "provisioning → ready", " anonymous ")

	var list client.EventList
	if err := json.Unmarshal([]byte(mustRunCLI(t, srv, exitOK, "", "history", "acme", "-o", "json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Events) != len(lines)-1 || list.Events[0].Type != "created" {
		t.Errorf("history -o json: %+v", list.Events)
	}

	res = mustRunCLI(t, srv, exitNotFound, "", "history", "nobody")
	mustContain(t, "stderr", res.stderr, "(404 tenant_not_found)")
}
