package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
)

// handoverManager is the field manager that holds a Deployment's replicas
// for a moment, between landlord letting go of them and an autoscaler
// taking them (see handover).
const handoverManager = "landlord-handover"

// replicaCount is the replicas option: a fixed count, which landlord
// applies and compares, or the range ({"min": N, "max": M}) of an
// autoscaler that owns the count, such as a HorizontalPodAutoscaler.
// Landlord then creates the Deployment with min Pods and afterwards
// leaves replicas out of what it applies and what Inspect compares, so
// that its field manager never owns the field and never fights the
// autoscaler for it.
type replicaCount struct {
	Fixed    *int32
	Min, Max int32
}

// UnmarshalJSON reads an integer or {"min": N, "max": M}.
func (r *replicaCount) UnmarshalJSON(b []byte) error {
	var n int32
	if err := json.Unmarshal(b, &n); err == nil {
		*r = replicaCount{Fixed: &n}
		return nil
	}
	var scaled struct {
		Min *int32 `json:"min"`
		Max *int32 `json:"max"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&scaled); err != nil {
		return fmt.Errorf(`replicas is an integer or {"min": N, "max": M}: %w`, err)
	}
	if scaled.Min == nil || scaled.Max == nil {
		return errors.New(`replicas as a range needs both min and max`)
	}
	*r = replicaCount{Min: *scaled.Min, Max: *scaled.Max}
	return nil
}

// MarshalJSON writes what UnmarshalJSON reads.
func (r replicaCount) MarshalJSON() ([]byte, error) {
	if r.Fixed != nil {
		return json.Marshal(*r.Fixed)
	}
	return json.Marshal(map[string]int32{"min": r.Min, "max": r.Max})
}

// scaling returns the range of an autoscaler that owns the count, nil for
// a fixed count.
func (o *tenantOptions) scaling() *replicaCount {
	if o.Replicas == nil || o.Replicas.Fixed != nil {
		return nil
	}
	return o.Replicas
}

// replicas is the fixed count, or the least of a range: the count a new
// Deployment starts with.
func (o *tenantOptions) replicas() int32 {
	switch {
	case o.Replicas == nil:
		return DefaultReplicas
	case o.Replicas.Fixed != nil:
		return *o.Replicas.Fixed
	default:
		return o.Replicas.Min
	}
}

// handover hands the replicas of the Deployment of a scaling range over
// from landlord to whoever scales it, following Kubernetes' documented
// way to transfer a field to an autoscaler with server-side apply
// ("Transferring ownership", https://kubernetes.io/docs/reference/using-api/server-side-apply/#transferring-ownership):
// another field manager applies replicas alone, so that when landlord
// applies without them the field is kept at its value rather than reset
// to the default, and the autoscaler's next change takes it from that
// manager without a conflict. It runs before landlord's apply of the
// Deployment without replicas:
//
//   - no Deployment yet: landlord creates it with min replicas, then the
//     handover manager applies min;
//   - landlord owns replicas (the config had a fixed count): the handover
//     manager applies the live count, brought into the range;
//   - otherwise nothing: the count is not landlord's already.
func handover(v view, d *desired) func(ctx context.Context, live metav1.Object, prev any) error {
	deployments := v.cl.kube.AppsV1().Deployments(d.names.namespace)
	return func(ctx context.Context, live metav1.Object, prev any) error {
		count := d.scaling.Min
		switch dep, _ := live.(*appsv1.Deployment); {
		case live == nil:
			create, err := withReplicas(d.deployment, count)
			if err != nil {
				return err
			}
			if _, err := deployments.Apply(ctx, create, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
				return err
			}
		case ownsReplicas(prev) && dep != nil:
			if dep.Spec.Replicas != nil {
				count = min(max(*dep.Spec.Replicas, d.scaling.Min), d.scaling.Max)
			}
		default:
			return nil
		}
		only := appsv1ac.Deployment(d.names.object, d.names.namespace).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(count))
		_, err := deployments.Apply(ctx, only, metav1.ApplyOptions{FieldManager: handoverManager, Force: true})
		return err
	}
}

// ownsReplicas reports whether landlord's share of a Deployment (what
// Extract gave) holds its replicas.
func ownsReplicas(prev any) bool {
	dep, ok := prev.(*appsv1ac.DeploymentApplyConfiguration)
	return ok && dep != nil && dep.Spec != nil && dep.Spec.Replicas != nil
}

// withReplicas is a copy of the Deployment's apply configuration with
// replicas set.
func withReplicas(want *appsv1ac.DeploymentApplyConfiguration, count int32) (*appsv1ac.DeploymentApplyConfiguration, error) {
	b, err := json.Marshal(want)
	if err != nil {
		return nil, err
	}
	out := &appsv1ac.DeploymentApplyConfiguration{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, err
	}
	if out.Spec == nil {
		out.Spec = appsv1ac.DeploymentSpec()
	}
	out.Spec.WithReplicas(count)
	return out, nil
}
