package kubernetes

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// A real kubelet shows a crash loop as the last exit between back-offs,
// and as a few seconds of Running, with the Deployment available, after
// each restart (seen on the test node: TestEndToEndOnANode). Neither is a
// running workload.
func TestRolloutOfACrashLoop(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	one := int32(1)
	available := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &one},
		Status: appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}}
	unavailable := available.DeepCopy()
	unavailable.Status.AvailableReplicas = 0
	exited := &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(now.Add(-30 * time.Second))}
	pod := func(cs corev1.ContainerStatus) []corev1.Pod {
		cs.Name = "app"
		return []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{cs}}}}
	}
	running := func(since time.Duration, restarts int32) []corev1.Pod {
		return pod(corev1.ContainerStatus{RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now.Add(-since))}},
			LastTerminationState: corev1.ContainerState{Terminated: exited}})
	}
	tests := []struct {
		name  string
		dep   *appsv1.Deployment
		pods  []corev1.Pod
		state provider.ComputeState
		says  []string
	}{
		{"started again 3s ago", available, running(3*time.Second, 2), provider.StateDegraded,
			[]string{"started again 3s ago", "exited with code 1, Error", "2 restarts", "stay up for 10s"}},
		{"up for 20s after a restart", available, running(20*time.Second, 2), provider.StateRunning, nil},
		{"first run", available, running(time.Second, 0), provider.StateRunning, nil},
		{"between back-offs", unavailable, pod(corev1.ContainerStatus{RestartCount: 3, State: corev1.ContainerState{Terminated: exited}}), provider.StateFailed,
			[]string{"crash loop (CrashLoopBackOff)", "exited with code 1 (Error)", "3 restarts"}},
		{"exited once", unavailable, pod(corev1.ContainerStatus{State: corev1.ContainerState{Terminated: exited}}), provider.StateFailed,
			[]string{"container app exited with code 1 (Error)"}},
	}
	for _, tt := range tests {
		state, msg := rollout(tt.dep, tt.pods, now)
		if state != tt.state {
			t.Errorf("%s: state %s (%q), want %s", tt.name, state, msg, tt.state)
		}
		for _, s := range tt.says {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: message %q, want it to say %q", tt.name, msg, s)
			}
		}
	}
}
