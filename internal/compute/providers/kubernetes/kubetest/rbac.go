package kubetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// ServiceAccount returns the path of a kubeconfig whose one context is a
// service account bound to the ClusterRole (and ClusterRoleBinding) of the
// manifest at path, as landlord would run in a cluster: landlord's tests
// run with what the manifest grants, not as an admin. The account is made
// once per binary; later calls return the same file.
func (c *Cluster) ServiceAccount(t testing.TB, manifest string) string {
	t.Helper()
	c.saOnce.Do(func() { c.saPath, c.saErr = c.serviceAccount(manifest) })
	if c.saErr != nil {
		t.Fatalf("kubetest: service account from %s: %v", manifest, c.saErr)
	}
	return c.saPath
}

func (c *Cluster) serviceAccount(manifest string) (string, error) {
	ctx := context.Background()
	raw, err := os.ReadFile(manifest)
	if err != nil {
		return "", err
	}
	var binding *rbacv1.ClusterRoleBinding
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		var kind struct{ Kind string }
		if err := yaml.Unmarshal(doc, &kind); err != nil {
			return "", err
		}
		switch kind.Kind {
		case "ClusterRole":
			var role rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict(doc, &role); err != nil {
				return "", err
			}
			if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return "", err
			}
		case "ClusterRoleBinding":
			binding = &rbacv1.ClusterRoleBinding{}
			if err := yaml.UnmarshalStrict(doc, binding); err != nil {
				return "", err
			}
		}
	}
	if binding == nil || len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" {
		return "", fmt.Errorf("%s has no ClusterRoleBinding to one service account", manifest)
	}
	sa := binding.Subjects[0]
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sa.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	if _, err := c.Client.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.Name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	return c.tokenKubeconfig(sa.Namespace, sa.Name)
}

// TokenKubeconfig returns the path of a kubeconfig whose one context is
// the service account name in namespace, which must exist.
func (c *Cluster) TokenKubeconfig(t testing.TB, namespace, name string) string {
	t.Helper()
	path, err := c.tokenKubeconfig(namespace, name)
	if err != nil {
		t.Fatalf("kubetest: kubeconfig of service account %s/%s: %v", namespace, name, err)
	}
	return path
}

func (c *Cluster) tokenKubeconfig(namespace, name string) (string, error) {
	hours := int64(24 * 3600)
	tok, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hours}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	cfg := &rest.Config{Host: c.host, BearerToken: tok.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: c.ca}}
	return c.WriteKubeconfig(namespace+"-"+name, cfg)
}
