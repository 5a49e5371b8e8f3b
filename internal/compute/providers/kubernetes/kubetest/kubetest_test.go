package kubetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
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

// The real node runs a Pod of the sandbox image (which is on the node:
// it pulls nothing), answers a Pod whose image is not there with the
// kubelet's own pull error, and a Pod's address is reachable from here.
func TestRealNodeRunsPods(t *testing.T) {
	c := StartNode(t)
	ctx := context.Background()
	ns := "kubetest-real-node"
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No registry answers on 127.0.0.1:1: the pull fails on the machine.
	for name, image := range map[string]string{"runs": PauseImage, "absent": "127.0.0.1:1/kubetest/absent:1"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]func(*corev1.Pod) bool{
		"runs": func(p *corev1.Pod) bool {
			return p.Spec.NodeName == c.Kubelet.Name && p.Status.PodIP != "" && p.Status.ContainerStatuses[0].Ready
		},
		"absent": func(p *corev1.Pod) bool {
			w := p.Status.ContainerStatuses[0].State.Waiting
			return w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") && strings.Contains(w.Message, "127.0.0.1:1")
		},
	}
	poll.Until(t, "every pod in the state wanted", time.Minute, func() (bool, string) {
		for name, ok := range want {
			pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(pod.Status.ContainerStatuses) != 1 || !ok(pod) {
				return false, fmt.Sprintf("pod %s: node %q, status %+v", name, pod.Spec.NodeName, pod.Status)
			}
		}
		return true, ""
	})
	pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, "runs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The pause container listens on nothing: a refused connection is the
	// Pod's own answer, a timeout would be the network's.
	conn, err := c.Dial(ctx, net.JoinHostPort(pod.Status.PodIP, "9"))
	if err == nil {
		conn.Close()
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("the Pod's address %s: %v, want a refused connection", pod.Status.PodIP, err)
	}
	if ids, err := c.Kubelet.Containers(ctx, ns); err != nil || len(ids) != 1 {
		t.Errorf("containers on the node in %s: %v, %v; want the one of Pod runs", ns, ids, err)
	}
	if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the namespace's containers gone from the node", 2*time.Minute, func() (bool, string) {
		ids, err := c.Kubelet.Containers(ctx, ns)
		return err == nil && len(ids) == 0, fmt.Sprintf("%v %v", ids, err)
	})
}
