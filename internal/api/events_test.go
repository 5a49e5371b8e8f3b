package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// A tenant's history pages newest first with order=newest, and a page token
// continues only the order that returned it.
func TestEventOrder(t *testing.T) {
	ts := newServer(t)
	created := ts.create(t, "acme", `{"image":"a"}`)
	for i := range 4 {
		if err := ts.store.AppendEvent(context.Background(), tenant.Event{TenantID: created.ID, Type: tenant.EventNote, Message: fmt.Sprintf("note %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(order string) (messages []string, firstToken string) {
		t.Helper()
		base := "/v1/tenants/acme/events?page_size=2"
		if order != "" {
			base += "&order=" + order
		}
		path := base
		for path != "" {
			res := ts.do(t, "GET", path, "", "")
			var page wire.EventList
			if err := json.Unmarshal(res.body, &page); err != nil || res.status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, res.status, res.body)
			}
			for _, e := range page.Events {
				messages = append(messages, e.Message)
			}
			if firstToken == "" {
				firstToken = page.NextPageToken
			}
			path = ""
			if page.NextPageToken != "" {
				path = base + "&page_token=" + page.NextPageToken
			}
		}
		return messages, firstToken
	}
	oldest, oldestToken := list("")
	if want := []string{"", "note 0", "note 1", "note 2", "note 3"}; !slices.Equal(oldest, want) {
		t.Errorf("oldest first = %q, want %q", oldest, want)
	}
	if explicit, _ := list("oldest"); !slices.Equal(explicit, oldest) {
		t.Errorf("order=oldest = %q, want %q", explicit, oldest)
	}
	newest, newestToken := list("newest")
	if want := []string{"note 3", "note 2", "note 1", "note 0", ""}; !slices.Equal(newest, want) {
		t.Errorf("newest first = %q, want %q", newest, want)
	}
	for _, tt := range []struct{ path, parameter string }{
		{"/v1/tenants/acme/events?order=newest&page_token=" + oldestToken, "page_token"},
		{"/v1/tenants/acme/events?page_token=" + newestToken, "page_token"},
		{"/v1/tenants/acme/events?order=latest", "order"},
		{"/v1/tenants/acme/events?order=NEWEST", "order"},
	} {
		res := ts.do(t, "GET", tt.path, "", "")
		p := res.problem(t)
		if res.status != http.StatusBadRequest || p.Code != wire.CodeInvalidParameter || len(p.Errors) != 1 || p.Errors[0].Parameter != tt.parameter {
			t.Errorf("GET %s: %d %s, want 400 %s naming %s", tt.path, res.status, res.body, wire.CodeInvalidParameter, tt.parameter)
		}
	}
}
