package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jaxxstorm/landlord/internal/poll"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// The servers testservers/build makes, the ones Start looks for, and the
// client landlord is built with are one Kubernetes release.
func TestVersionsAgree(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "testservers", "build"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^KUBERNETES=(v\S+)$`).FindSubmatch(script)
	if m == nil || string(m[1]) != Version {
		t.Errorf("testservers/build builds Kubernetes %s, kubetest.Version is %s", m, Version)
	}
	gomod, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	client := regexp.MustCompile(`(?m)^\s*k8s.io/client-go (v\S+)`).FindSubmatch(gomod)
	if client == nil {
		t.Fatal("go.mod does not require k8s.io/client-go")
	}
	if strings.TrimPrefix(string(client[1]), "v0.") != strings.TrimPrefix(Version, "v1.") {
		t.Errorf("landlord is built with client-go %s, the test servers are Kubernetes %s", client[1], Version)
	}
}

// The node plays the kubelet: a Pod's containers are reported running and
// ready, or waiting on an image that cannot be pulled.
func TestNodeStartsPods(t *testing.T) {
	c := Start(t)
	ctx := context.Background()
	ns := "kubetest-node"
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, image := range map[string]string{"runs": "example/app:1", "unpullable": "example/unpullable:1", "crashloop": "example/crashloop:1"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]func(corev1.ContainerStatus) bool{
		"runs": func(s corev1.ContainerStatus) bool { return s.Ready && s.State.Running != nil },
		"unpullable": func(s corev1.ContainerStatus) bool {
			return s.State.Waiting != nil && s.State.Waiting.Reason == "ImagePullBackOff"
		},
		"crashloop": func(s corev1.ContainerStatus) bool {
			return s.State.Waiting != nil && s.State.Waiting.Reason == "CrashLoopBackOff"
		},
	}
	poll.Until(t, "every pod in the state wanted", 30*time.Second, func() (bool, string) {
		for name, ok := range want {
			pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(pod.Status.ContainerStatuses) != 1 || !ok(pod.Status.ContainerStatuses[0]) {
				return false, fmt.Sprintf("pod %s: status %+v", name, pod.Status)
			}
		}
		return true, ""
	})
	if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
