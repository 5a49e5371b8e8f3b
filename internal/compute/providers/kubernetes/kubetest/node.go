package kubetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// Node plays the kubelet: it reports the containers of every Pod as
// started and ready (through the status subresource, as a kubelet does),
// except images it is told cannot start. It never binds Pods to a node, so
// the API server deletes them at once, as it does Pods no kubelet runs.
type Node struct {
	client kubernetes.Interface
	cancel context.CancelFunc
	done   chan struct{}
	// held are the namespaces whose Pods wait (Hold).
	held sync.Map // namespace → struct{}
	// updates counts the Pod status writes, for tests that check the
	// node is not what they measure.
	updates atomic.Int64
	mu      sync.Mutex
	ips     int
}

func startNode(client kubernetes.Interface) *Node {
	ctx, cancel := context.WithCancel(context.Background())
	n := &Node{client: client, cancel: cancel, done: make(chan struct{})}
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods().Informer()
	_, _ = pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { n.handle(ctx, obj) },
		UpdateFunc: func(_, obj any) { n.handle(ctx, obj) },
	})
	go func() {
		defer close(n.done)
		pods.Run(ctx.Done())
	}()
	return n
}

func (n *Node) stop() {
	n.cancel()
	<-n.done
}

// Hold keeps the node from starting the Pods of namespace until the
// returned function is called, which starts those created meanwhile.
// Other namespaces' Pods start as ever, so tests that hold may run in
// parallel.
func (n *Node) Hold(namespace string) (release func()) {
	n.held.Store(namespace, struct{}{})
	return func() {
		n.held.Delete(namespace)
		ctx := context.Background()
		list, err := n.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for i := range list.Items {
			n.handle(ctx, &list.Items[i])
		}
	}
}

// Updates counts the Pod status writes the node made.
func (n *Node) Updates() int64 { return n.updates.Load() }

// handle reports a Pod's containers once, when it has no status yet.
func (n *Node) handle(ctx context.Context, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.DeletionTimestamp != nil || len(pod.Status.ContainerStatuses) > 0 {
		return
	}
	if _, held := n.held.Load(pod.Namespace); held {
		return
	}
	go func() {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			current, err := n.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(current.Status.ContainerStatuses) > 0 || current.DeletionTimestamp != nil {
				return nil
			}
			n.report(current)
			_, err = n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, current, metav1.UpdateOptions{})
			return err
		})
		if err == nil {
			n.updates.Add(1)
		} else if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			fmt.Printf("kubetest: node: status of pod %s/%s: %v\n", pod.Namespace, pod.Name, err)
		}
	}()
}

// report sets the status a kubelet would: every container running and
// ready, or waiting on an image that cannot start.
func (n *Node) report(pod *corev1.Pod) {
	now := metav1.NewTime(time.Now())
	ready := corev1.ConditionTrue
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	pod.Status.HostIP = "127.0.0.1"
	pod.Status.PodIP = n.nextIP()
	pod.Status.PodIPs = []corev1.PodIP{{IP: pod.Status.PodIP}}
	for _, c := range pod.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "sha256:" + randomHex(32)}
		switch {
		case strings.Contains(c.Image, "unpullable"):
			ready, pod.Status.Phase = corev1.ConditionFalse, corev1.PodPending
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
				Message: fmt.Sprintf("Back-off pulling image %q: ErrImagePull: failed to pull and unpack image: not found", c.Image)}
		case strings.Contains(c.Image, "crashloop"):
			ready = corev1.ConditionFalse
			cs.RestartCount = 5
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: "back-off 5m0s restarting failed container=" + c.Name + " pod=" + pod.Name + "_" + pod.Namespace}
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", FinishedAt: now}
		default:
			started := true
			cs.Ready, cs.Started = true, &started
			cs.ContainerID = "containerd://" + randomHex(32)
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
	}
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
	}
}

// nextIP hands out Pod addresses in 10.244.0.0/16.
func (n *Node) nextIP() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ips++
	return fmt.Sprintf("10.244.%d.%d", n.ips/250, n.ips%250+1)
}
