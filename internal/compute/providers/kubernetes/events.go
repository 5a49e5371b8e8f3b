package kubernetes

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Reasons of the Events landlord records on a tenant's objects, which
// kubectl describe shows.
const (
	// ReasonCreated: landlord created the tenant's objects.
	ReasonCreated = "Created"
	// ReasonUpdated: landlord applied a new spec of the tenant.
	ReasonUpdated = "Updated"
	// ReasonDriftRepaired: landlord put back objects changed or deleted
	// behind its back, the spec unchanged.
	ReasonDriftRepaired = "DriftRepaired"
)

// reportingController is landlord's name in the Events it records.
const reportingController = "landlord.dev/landlord"

// maxNote is the most an Event's note may hold (events.k8s.io/v1
// validation: 1 kB).
const maxNote = 1024

// reportingInstance names this landlord process in its Events.
var reportingInstance = func() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "landlord"
	}
	s := host + "-" + strconv.Itoa(os.Getpid())
	return s[:min(len(s), 128)]
}()

// recordApplied records, as Kubernetes Events (events.k8s.io/v1), what an
// apply that changed something did: one Event on the Deployment, whose
// reason says whether the tenant was created, updated to a new spec, or
// put back to the spec it had (drift repaired), and, for a repair, one on
// each other object put back. before is the Deployment as read before the
// apply (nil when the caller did not read it). An Event that cannot be
// recorded is logged and costs nothing else: they are for people, and
// landlord's own history holds the same.
func (p *Provider) recordApplied(ctx context.Context, cl *cluster, spec *provider.TenantComputeSpec, writes []*write, before metav1.Object) {
	var deployment *write
	for _, w := range writes {
		if w.o.kind == kindDeployment {
			deployment = w
		}
	}
	if before == nil && deployment != nil {
		before = deployment.o.seen
	}
	reason := ReasonUpdated
	switch {
	case before == nil && len(spec.ResourceIDs) == 0:
		reason = ReasonCreated
	case before == nil || before.GetAnnotations()[annotGeneration] == strconv.FormatInt(spec.Generation, 10):
		// The objects were made before, and the spec is the one they were
		// made for: what differed was changed behind landlord's back.
		reason = ReasonDriftRepaired
	}
	var notes []string
	for _, w := range writes {
		notes = append(notes, describeWrite(w))
	}
	target := before
	if deployment != nil && deployment.live != nil {
		target = deployment.live
	}
	if target != nil {
		p.event(ctx, cl, spec.TenantID, kindDeployment, "apps/v1", target, reason, fmt.Sprintf("%s generation %d: %s", verbOf(reason), spec.Generation, strings.Join(notes, "; ")))
	}
	if reason != ReasonDriftRepaired {
		return
	}
	for _, w := range writes {
		if w.o.kind == kindDeployment || w.o.kind == kindNamespace || w.live == nil {
			continue
		}
		p.event(ctx, cl, spec.TenantID, w.o.kind, apiVersionOf(w.o.kind), w.live, reason, describeWrite(w))
	}
}

func verbOf(reason string) string {
	switch reason {
	case ReasonCreated:
		return "created the objects of"
	case ReasonDriftRepaired:
		return "put back the objects of"
	default:
		return "applied"
	}
}

// describeWrite words one write for a note.
func describeWrite(w *write) string {
	switch {
	case w.live == nil:
		return "deleted " + w.o.String()
	case w.created():
		return "created " + w.o.String()
	case len(w.drift) > 0:
		return "applied " + w.o.String() + " (" + provider.Summarize(w.drift) + ")"
	default:
		return "applied " + w.o.String()
	}
}

func apiVersionOf(kind string) string {
	switch kind {
	case kindDeployment:
		return "apps/v1"
	case kindNetworkPolicy, kindIngress:
		return "networking.k8s.io/v1"
	default:
		return "v1"
	}
}

// event records one Event regarding obj.
func (p *Provider) event(ctx context.Context, cl *cluster, tenantID, kind, apiVersion string, obj metav1.Object, reason, note string) {
	if len(note) > maxNote {
		note = note[:maxNote-len("…")] + "…"
	}
	now := time.Now()
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", obj.GetName(), now.UnixNano()), Namespace: obj.GetNamespace(),
			Labels: map[string]string{labelManagedBy: managedBy, labelTenantID: tenantID}},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: reportingController,
		ReportingInstance:   reportingInstance,
		Action:              "Apply",
		Reason:              reason,
		Type:                corev1.EventTypeNormal,
		Note:                note,
		Regarding: corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()},
	}
	if _, err := cl.kube.EventsV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		p.log(tenantID).Warn("cannot record a Kubernetes Event; kubectl describe will not show it", "reason", reason, "object", kind+" "+obj.GetNamespace()+"/"+obj.GetName(), "error", err)
	}
}
