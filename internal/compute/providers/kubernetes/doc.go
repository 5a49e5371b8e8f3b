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
// fields as landlord set them (Extract) already match, and whose values in
// those fields are what the spec asks for, is not written, so a no-op
// update writes nothing while a changed or deleted object is applied again
// (server-side apply with force takes back the fields others changed).
// Every apply that writes records a Kubernetes Event on the Deployment
// (Created, Updated or DriftRepaired), and a repair one on each object it
// put back, so that kubectl describe shows what landlord did. A
// Provision or Update that fails takes back what it wrote. Nothing is kept
// in memory that is needed to finish: a restarted landlord finds the
// objects by name and label.
//
// The replicas option is a count landlord keeps, or a range
// ({"min": N, "max": M}) whose count an autoscaler owns: landlord then
// creates the Deployment with N Pods and hands the field over (see
// replicas.go), never setting or comparing it again.
//
// The provider is a provider.ChangeNotifier: while its change watch runs,
// shared informers of every kind landlord writes (filtered by its label)
// and of its Pods keep a cache, whose events wake a tenant's reconcile
// when any of its objects changes or is deleted, and which GetStatus,
// Inspect, Provision and Update read instead of asking the API server
// (see view for why that is live enough, and what is still asked).
//
// GetStatus reads the Deployment's rollout as kubectl rollout status does,
// and the reasons its Pods give (image pulls, crash loops, scheduling,
// memory, quota, no node assigned) for the tenant's message. The provider
// is a provider.DriftDetector: Inspect compares every object and field
// landlord writes with the spec (see drift.go and compare.go). A tenant's
// config may pick another context of landlord's kubeconfig, so the
// provider is a provider.Locator too.
//
// Destroy deletes the tenant's namespace, or in a shared one each of its
// objects, with foreground propagation, and waits until they are gone.
//
// The least privilege it needs is deploy/kubernetes/rbac.yaml; the tests
// run as a service account bound to exactly that, against a real
// kube-apiserver and kube-controller-manager (see package kubetest and
// docs/compute-providers.md for what that proves and what it does not).
package kubernetes
