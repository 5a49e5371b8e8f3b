// Package kubernetes is the compute provider that runs each tenant as a
// Deployment on Kubernetes, through client-go and server-side apply (field
// manager "landlord").
//
// A tenant's objects are its Deployment, a Service of its published ports,
// a Secret of its secret values (read by the Pods through secretKeyRef, so
// that the Deployment never shows one), an optional Ingress, and in
// namespace_mode per-tenant (the default) a Namespace of its own,
// <namespace_prefix><name>, with an optional ResourceQuota, a NetworkPolicy
// that keeps other tenants out, and copies of its image pull secrets. In
// namespace_mode shared they live side by side in the operator's namespace.
// Every object is named after the tenant (a DNS label, shortened with a
// hash when too long) and labelled app.kubernetes.io/managed-by=landlord
// and landlord.dev/tenant-id.
//
// Provision and Update are the same apply, object by object. Each object
// is read first: one of the name that is not labelled with the tenant's id
// is a conflict (compute.ErrProviderConflict), never taken over; one whose
// fields as landlord set them (Extract) already match is not written, so a
// no-op update writes nothing. A Provision or Update that fails takes back
// what it wrote. Nothing is kept in memory that is needed to finish: a
// restarted landlord finds the objects by name and label.
//
// GetStatus reads the Deployment's rollout as kubectl rollout status does,
// and the reasons its Pods give (image pulls, crash loops, scheduling,
// memory, quota) for the tenant's message. The provider is a
// compute.ChangeNotifier: a metadata-only watch of landlord's Deployments
// and Pods wakes a tenant's reconcile when its workload changes. A tenant's
// config may pick another context of landlord's kubeconfig, so the
// provider is a compute.Locator too.
//
// Destroy deletes the tenant's namespace, or in a shared one each of its
// objects, with foreground propagation, and waits until they are gone.
//
// The least privilege it needs is deploy/kubernetes/rbac.yaml; the tests
// run as a service account bound to exactly that, against a real
// kube-apiserver and kube-controller-manager (see package kubetest and
// docs/compute-providers.md for what that proves and what it does not).
package kubernetes
