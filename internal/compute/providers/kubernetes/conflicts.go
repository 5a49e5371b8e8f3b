package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1typed "k8s.io/client-go/kubernetes/typed/apps/v1"
)

// A server-side apply sets the fields landlord names and leaves the
// others' fields alone, even the one that stands in for a field landlord
// sets: an env var given a value by hand (kubectl set env) where landlord
// reads it from a Secret, or a probe made to exec where landlord's does an
// HTTP GET. Landlord's apply would then add its own beside it, and the API
// server refuse a variable with both a value and a source, or a probe of
// two kinds. clearRivals removes those rivals first, so that the apply
// that follows puts the Deployment back.

// patchOp is one operation of a JSON patch (RFC 6902).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// clearRivals removes from the live Deployment the fields that rival
// those landlord sets, with one JSON patch whose tests make sure it
// changes the containers and env vars it read, at the indexes it read
// them. It makes no request when there are none.
func clearRivals(ctx context.Context, deployments appsv1typed.DeploymentInterface, want *appsv1.Deployment, live *appsv1.Deployment) error {
	var ops []patchOp
	for _, w := range want.Spec.Template.Spec.Containers {
		ci := slices.IndexFunc(live.Spec.Template.Spec.Containers, func(l corev1.Container) bool { return l.Name == w.Name })
		if ci < 0 {
			continue
		}
		l := live.Spec.Template.Spec.Containers[ci]
		at := fmt.Sprintf("/spec/template/spec/containers/%d", ci)
		var mine []patchOp
		for _, e := range w.Env {
			ei := slices.IndexFunc(l.Env, func(le corev1.EnvVar) bool { return le.Name == e.Name })
			if ei < 0 {
				continue
			}
			le, env := l.Env[ei], fmt.Sprintf("%s/env/%d", at, ei)
			switch {
			case e.ValueFrom != nil && le.Value != "":
				mine = append(mine, patchOp{Op: "test", Path: env + "/name", Value: e.Name}, patchOp{Op: "remove", Path: env + "/value"})
			case e.ValueFrom == nil && le.ValueFrom != nil:
				mine = append(mine, patchOp{Op: "test", Path: env + "/name", Value: e.Name}, patchOp{Op: "remove", Path: env + "/valueFrom"})
			}
		}
		for _, pr := range []struct {
			field string
			w, l  *corev1.Probe
		}{{"readinessProbe", w.ReadinessProbe, l.ReadinessProbe}, {"livenessProbe", w.LivenessProbe, l.LivenessProbe}, {"startupProbe", w.StartupProbe, l.StartupProbe}} {
			if pr.w == nil || pr.l == nil {
				continue
			}
			for _, h := range []struct {
				name       string
				want, live bool
			}{{"httpGet", pr.w.HTTPGet != nil, pr.l.HTTPGet != nil}, {"tcpSocket", pr.w.TCPSocket != nil, pr.l.TCPSocket != nil},
				{"exec", pr.w.Exec != nil, pr.l.Exec != nil}, {"grpc", pr.w.GRPC != nil, pr.l.GRPC != nil}} {
				if h.live && !h.want {
					mine = append(mine, patchOp{Op: "remove", Path: at + "/" + pr.field + "/" + h.name})
				}
			}
		}
		if len(mine) > 0 {
			ops = append(ops, patchOp{Op: "test", Path: at + "/name", Value: w.Name})
			ops = append(ops, mine...)
		}
	}
	if len(ops) == 0 {
		return nil
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	_, err = deployments.Patch(ctx, live.Name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: fieldManager})
	return err
}
