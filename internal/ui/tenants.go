package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// listPageSize is how many tenants a page of the list shows.
const listPageSize = 50

type listView struct {
	Status, Provider, Label, Q string
	// Plan keeps the tenants of a plan (a plan's page links here).
	Plan      string
	Statuses  []string
	Providers []string
	Tenants   []tenantRow
	// This and Next are page tokens, FirstURL and NextURL their pages;
	// Filtered says a filter is set.
	This, Next        string
	FirstURL, NextURL string
	Filtered          bool
	// Detail and Problems are the API's complaints about the filters,
	// Problems by parameter.
	Detail   string
	Problems map[string]string
	LiveURL  string
}

// tenantRow is one row of the list, also rendered alone for live updates.
type tenantRow struct {
	client.Tenant
}

// Providers is what the tenant runs on: its provider, or the providers of
// its placements joined with + ("docker+nomad").
func (r tenantRow) Providers() string { return providers(r.Tenant) }

// providers is what t runs on, joined with + (client.Providers).
func providers(t client.Tenant) string { return strings.Join(client.Providers(t), "+") }

func (c *Console) listTenants(x *call) error {
	q := x.r.URL.Query()
	v := listView{Status: q.Get("status"), Provider: q.Get("provider"), Label: strings.TrimSpace(q.Get("label")), Q: strings.TrimSpace(q.Get("q")),
		Plan: q.Get("plan"), Statuses: slices.Clone(clientStatuses), This: q.Get("page_token")}
	v.Filtered = v.Status != "" || v.Provider != "" || v.Label != "" || v.Q != "" || v.Plan != ""
	opts := client.ListOptions{Provider: v.Provider, NamePrefix: v.Q, Plan: v.Plan, PageSize: listPageSize, PageToken: v.This}
	if v.Status != "" {
		opts.Statuses = []string{v.Status}
	}
	for term := range strings.SplitSeq(v.Label, ",") {
		if term = strings.TrimSpace(term); term != "" {
			opts.Labels = append(opts.Labels, term)
		}
	}
	v.Providers = c.providerNames(x)
	list, err := x.api.Tenants().List(x.r.Context(), opts)
	if apiErr, ok := errors.AsType[*client.Error](err); ok && apiErr.Status == http.StatusBadRequest {
		v.Detail, v.Problems = apiErr.Problem.Detail, map[string]string{}
		for _, f := range apiErr.Problem.Errors {
			v.Problems[f.Parameter] = strings.TrimSpace(v.Problems[f.Parameter] + " " + f.Message)
		}
		return c.showStatus(x, http.StatusBadRequest, "tenants", "Tenants", "tenants", v)
	}
	if err != nil {
		return err
	}
	ids := url.Values{"view": {"list"}}
	for _, t := range list.Tenants {
		v.Tenants = append(v.Tenants, tenantRow{t})
		ids.Add("tenant", t.ID)
	}
	v.Next = list.NextPageToken
	filters := url.Values{}
	for k, val := range map[string]string{"q": v.Q, "status": v.Status, "provider": v.Provider, "label": v.Label, "plan": v.Plan} {
		if val != "" {
			filters.Set(k, val)
		}
	}
	v.FirstURL = Prefix + "?" + filters.Encode()
	filters.Set("page_token", v.Next)
	v.NextURL = Prefix + "?" + filters.Encode()
	if c.fed {
		v.LiveURL = Prefix + "live?" + ids.Encode()
	}
	return c.show(x, "tenants", "Tenants", "tenants", v)
}

var clientStatuses = []string{client.StatusRequested, client.StatusProvisioning, client.StatusReady, client.StatusUpdating, client.StatusDeleting, client.StatusFailed, client.StatusDeleted}

// tenantView is a tenant's page; its parts are rendered alone for live
// updates.
type tenantView struct {
	T client.Tenant
	// Providers is what it runs on (tenantRow.Providers).
	Providers string
	// Placements are those of a tenant with placements, each with its
	// workload; none for a plain tenant, whose Workload is its own.
	Placements []placementView
	// Events are the latest of its history, newest first.
	Events   []client.Event
	Older    bool
	Workload *client.ComputeStatus
	// WorkloadNote says why there is no workload to show.
	WorkloadNote string
	// Secrets names the secrets that are set, by pointer.
	Secrets  []string
	Paused   bool
	CanWrite bool
	CSRF     string
	LiveURL  string
	// ConfirmError says the name typed to confirm a deletion was wrong.
	ConfirmError string
}

// historyShown is how many of a tenant's latest events its page shows.
const historyShown = 100

func (c *Console) tenantPage(x *call) error {
	v, err := c.tenantView(x, x.r.PathValue("tenant"), true)
	if err != nil {
		return err
	}
	return c.show(x, "tenant", v.T.Name, "tenants", v)
}

// tenantView reads what a tenant's page shows; the workload's live status
// only with workload (live updates leave it out).
func (c *Console) tenantView(x *call, idOrName string, workload bool) (*tenantView, error) {
	ctx := x.r.Context()
	t, err := x.api.Tenants().Get(ctx, idOrName, client.GetOptions{IncludeDeleted: true})
	if err != nil {
		return nil, err
	}
	v := &tenantView{T: *t, Providers: providers(*t), CanWrite: x.canWrite() && t.Status != client.StatusDeleted && t.Status != client.StatusDeleting, CSRF: x.sess.CSRF,
		Paused: t.Annotations[client.PausedAnnotation] == "true"}
	if c.fed {
		v.LiveURL = Prefix + "live?" + url.Values{"view": {"tenant"}, "tenant": {t.ID}}.Encode()
	}
	v.Secrets = setSecrets(t.ComputeConfig)
	events, err := x.api.Tenants().Events(ctx, t.ID, client.EventOptions{Newest: true, PageSize: historyShown})
	if err != nil {
		return nil, err
	}
	v.Events, v.Older = events.Events, events.NextPageToken != ""
	if len(t.Placements) > 0 {
		for _, p := range t.Placements {
			pv := placementView{Placement: p}
			if workload && t.Status != client.StatusDeleted {
				pv.Workload, pv.WorkloadNote = readWorkload(x, t.ID, p.Name, "placement")
			}
			v.Placements = append(v.Placements, pv)
		}
	} else if workload && t.Status != client.StatusDeleted {
		v.Workload, v.WorkloadNote = readWorkload(x, t.ID, "", "tenant")
	}
	return v, nil
}

// placementView is a placement of a tenant's page, with its workload's
// live status when the page reads it.
type placementView struct {
	client.Placement
	Workload *client.ComputeStatus
	// WorkloadNote says why there is no workload to show.
	WorkloadNote string
}

// readWorkload reads the live status of the workload of a tenant, or of
// its placement, which what names ("tenant", "placement") in the note
// that says why there is none to show.
func readWorkload(x *call, tenantID, placement, what string) (*client.ComputeStatus, string) {
	st, err := x.api.Tenants().StatusOf(x.r.Context(), tenantID, client.StatusOptions{Placement: placement})
	switch {
	case err == nil:
		return st, ""
	case client.IsNotFound(err):
		return nil, "No workload runs for this " + what + " yet."
	}
	return nil, "The provider did not answer: " + err.Error()
}

// setSecrets lists the pointers of the secrets a config sets: the API
// shows each as "[redacted]", and the page says only that it is set.
func setSecrets(config json.RawMessage) []string {
	v, err := decodeOrdered(config)
	if err != nil {
		return nil
	}
	var out []string
	var walk func(pointer string, v any)
	walk = func(pointer string, v any) {
		switch v := v.(type) {
		case object:
			for _, m := range v {
				walk(pointer+"/"+violation.Escape(m.Key), m.Value)
			}
		case []any:
			for i, it := range v {
				walk(pointer+"/"+strconv.Itoa(i), it)
			}
		case string:
			if v == client.RedactedValue {
				out = append(out, pointer)
			}
		}
	}
	walk("/compute_config", v)
	return out
}

// pause, resume and retry change the tenant's annotations with a merge
// patch, as any client would.
func (c *Console) pause(x *call) error {
	return c.annotate(x, client.PausedAnnotation, "true")
}

func (c *Console) resume(x *call) error {
	return c.annotate(x, client.PausedAnnotation, nil)
}

func (c *Console) retry(x *call) error {
	return c.annotate(x, client.RetryAnnotation, c.opts.Now().UTC().Format(time.RFC3339Nano))
}

func (c *Console) annotate(x *call, key string, value any) error {
	patch, _ := json.Marshal(map[string]any{"annotations": map[string]any{key: value}})
	t, err := x.api.Tenants().Patch(x.r.Context(), x.r.PathValue("tenant"), patch, client.UpdateOptions{})
	if err != nil {
		return err
	}
	http.Redirect(x.w, x.r, tenantPath(t.Name), http.StatusSeeOther)
	return nil
}

// deleteTenant deletes the tenant once its name is typed to confirm it.
func (c *Console) deleteTenant(x *call) error {
	t, err := x.api.Tenants().Get(x.r.Context(), x.r.PathValue("tenant"), client.GetOptions{})
	if err != nil {
		return err
	}
	if typed := strings.TrimSpace(x.r.PostFormValue("confirm")); typed != t.Name {
		v, err := c.tenantView(x, t.ID, true)
		if err != nil {
			return err
		}
		v.ConfirmError = "Type the tenant's name, " + t.Name + ", to delete it."
		return c.showStatus(x, http.StatusUnprocessableEntity, "tenant", t.Name, "tenants", v)
	}
	if _, err := x.api.Tenants().Delete(x.r.Context(), t.ID, client.DeleteOptions{IfMatch: t.Version}); err != nil {
		return err
	}
	http.Redirect(x.w, x.r, tenantPath(t.ID), http.StatusSeeOther)
	return nil
}

func tenantPath(idOrName string) string { return Prefix + "tenants/" + url.PathEscape(idOrName) }
