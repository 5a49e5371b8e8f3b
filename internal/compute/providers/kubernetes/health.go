package kubernetes

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CheckHealth asks the API server of the block's context whether it is
// ready, and in namespace_mode shared, whether the shared namespace exists.
func (p *Provider) CheckHealth(ctx context.Context) error {
	cl, err := p.clients.get(p.base.Context)
	if err != nil {
		return err
	}
	body, err := cl.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("kubernetes: the API server (%s) is not ready: %w: %s", p.clients.source, err, body)
	}
	if p.base.mode() == Shared {
		if _, err := cl.kube.CoreV1().Namespaces().Get(ctx, p.base.sharedNamespace(), metav1.GetOptions{}); err != nil {
			return fmt.Errorf("kubernetes: the shared namespace: %w", apiError("read namespace "+p.base.sharedNamespace(), err))
		}
	}
	return nil
}
