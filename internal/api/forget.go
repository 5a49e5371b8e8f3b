package api

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// forgetTenant deletes the record of a tenant whose provider is not
// enabled, at once and destroying nothing (DELETE ?forget=true): the way
// out for tenants stranded by a switch of provider, which the controller
// cannot delete. A tenant whose provider is enabled is refused, so that a
// workload landlord can destroy is never left running by mistake. The
// tenant's history and the log say who forgot it and what may be left
// running.
func (s *Server) forgetTenant(w http.ResponseWriter, r *http.Request, cur *tenant.Tenant, ifMatch ifMatch) error {
	if _, err := s.compute.Registry().Get(cur.Provider); err == nil {
		return problem(http.StatusConflict, CodeProviderEnabled,
			fmt.Sprintf("the tenant's provider %s is enabled on this server: delete the tenant without forget, so that its workload is destroyed", cur.Provider),
			FieldError{Parameter: "forget", Message: "only for a tenant whose provider is not enabled"})
	}
	if !tenant.LeftAlone(cur) {
		// This replica lacks the provider, but the controller has not said
		// it does: the leader may have it (a rolling change of
		// configuration) and be running the workload.
		return problem(http.StatusConflict, CodeProviderEnabled,
			fmt.Sprintf("the controller has not recorded that provider %s is not enabled where it runs; it may still manage the tenant (replicas with different providers?): forget it once landlord get shows it left as it is", cur.Provider),
			FieldError{Parameter: "forget", Message: "only for a tenant the controller leaves alone"})
	}
	f, ok := s.store.(tenant.Forgetter)
	if !ok {
		return fmt.Errorf("api: the store %T cannot forget tenants", s.store)
	}
	left := leftRunning(cur)
	msg := fmt.Sprintf("forgotten: the record was deleted without destroying anything, as compute provider %s is not enabled on this server", cur.Provider)
	if left != "" {
		msg += "; these may still run there: " + left
	}
	var version int64
	if !ifMatch.any() {
		version = cur.Version
	}
	out, err := f.Forget(r.Context(), cur.ID, version, actor(r), msg)
	if errors.Is(err, tenant.ErrConflict) && !ifMatch.any() {
		return preconditionFailed(0)
	}
	if err != nil {
		return err
	}
	s.log.WarnContext(r.Context(), "tenant forgotten: its record is deleted, its workload was not destroyed",
		slog.String("request_id", requestID(r)), slog.String("tenant_id", cur.ID), slog.String("tenant", cur.Name),
		slog.String("provider", cur.Provider), slog.String("actor", actor(r)), slog.String("may_still_run", left))
	s.writeTenant(w, http.StatusOK, out)
	return nil
}

// leftRunning names what a tenant's workload had on its platform, as far
// as landlord knows: its resource ids and endpoints.
func leftRunning(t *tenant.Tenant) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(t.ResourceIDs)) {
		parts = append(parts, k+"="+t.ResourceIDs[k])
	}
	for _, e := range t.Endpoints {
		parts = append(parts, "endpoint "+e.Address)
	}
	return strings.Join(parts, ", ")
}
