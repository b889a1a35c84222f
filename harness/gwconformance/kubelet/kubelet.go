// Package kubelet is the node side of the offline conformance run: what the Deployment,
// Service and EndpointSlice controllers and a kubelet would do for the objects the suite
// applies. Every Deployment gets its Pods (Ready, each with its own loopback address),
// every Service a ClusterIP and an EndpointSlice of its Ready Pods, and, when a backend
// binary is given (the suite's own echo-basic), every Pod a running process whose log the
// API serves.
//
// echo-basic listens on fixed ports of every address (:3000, :8443...), so two Pods cannot
// both run it on one machine. Each Pod's process gets free ports of its own instead, and
// the Pod's address forwards the ports the Pod declares (3000, 3001, 8443) to them: the
// "pod network". Envoy, the suite's helpers and manual EndpointSlices reach a Pod at
// podIP:3000 exactly as in a cluster.
package kubelet

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/egharness/egharness/harness/gwconformance/kubeapi"
)

// NodeName is the one node every Pod runs on.
const NodeName = "egharness-node"

// managedBy marks the EndpointSlices this package maintains (as the EndpointSlice
// controller marks its own); slices without it (a test's manual ones) are left alone.
const (
	managedByLabel = "endpointslice.kubernetes.io/managed-by"
	managedBy      = "endpointslice-controller.k8s.io"
)

var (
	gkDeployment    = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	gkPod           = schema.GroupKind{Kind: "Pod"}
	gkService       = schema.GroupKind{Kind: "Service"}
	gkEndpointSlice = schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}
)

// Options configure a Kubelet.
type Options struct {
	// Backend is the echo-basic binary each Pod runs; "" runs none (Pods are Ready all the
	// same, for a data plane that answers for the backends itself).
	Backend string
	// PodIP hands out a fresh loopback address for each Pod.
	PodIP func() string
	// ServiceIP, when set, hands out the ClusterIPs (loopback addresses), and each Service
	// port is served there (proxy.go); when nil, ClusterIPs are 10.96.x.y and unreachable.
	ServiceIP func() string
	// Dir holds each Pod's files (its Secret and ConfigMap volumes).
	Dir string
	Log *slog.Logger
}

// Kubelet reconciles the store on every change.
type Kubelet struct {
	store *kubeapi.Store
	opts  Options

	mu        sync.Mutex
	pods      map[kubeapi.Key]*podProcess
	ips       map[kubeapi.Key]string
	proxies   map[string]*serviceProxy // ClusterIP:port
	pending   map[kubeapi.Key]string   // why a Pod has not started yet
	clusterIP int
	errs      []string
}

// New makes a Kubelet for the store; Run starts it.
func New(store *kubeapi.Store, opts Options) *Kubelet {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Kubelet{store: store, opts: opts, pods: map[kubeapi.Key]*podProcess{},
		ips: map[kubeapi.Key]string{}, pending: map[kubeapi.Key]string{}, proxies: map[string]*serviceProxy{}}
}

// Run reconciles until ctx ends, then stops every Pod's process.
func (k *Kubelet) Run(ctx context.Context) {
	changed := k.store.Subscribe()
	defer k.stopAll()
	defer k.stopProxies()
	for {
		k.Reconcile()
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// Errors are the problems met so far (a Pod whose process would not start...).
func (k *Kubelet) Errors() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := slices.Clone(k.errs)
	for key, why := range k.pending {
		if k.pods[key] == nil {
			out = append(out, fmt.Sprintf("Pod %s runs no process: %s", key, why))
		}
	}
	slices.Sort(out[len(k.errs):])
	return out
}

func (k *Kubelet) fail(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	k.opts.Log.Warn(msg)
	k.mu.Lock()
	k.errs = append(k.errs, msg)
	k.mu.Unlock()
}

// Reconcile brings Pods, Deployment statuses, ClusterIPs and EndpointSlices in line with
// what is stored now.
func (k *Kubelet) Reconcile() {
	k.reconcilePods()
	k.reconcileServices()
}

func decode[T any](u *unstructured.Unstructured) (*T, error) {
	out := new(T)
	return out, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out)
}

func encode(obj any, apiVersion, kind string) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u, nil
}

// updateFrom writes obj, the apiVersion kind that current was read as, over current (its
// status subresource when status is set). A write that fails (current is no longer the
// latest) is only logged, with logMsg and logArgs: the next change writes again.
func (k *Kubelet) updateFrom(current *unstructured.Unstructured, obj any, apiVersion, kind string, status bool,
	logMsg string, logArgs ...any) bool {
	u, err := encode(obj, apiVersion, kind)
	if err != nil {
		return false
	}
	u.SetResourceVersion(current.GetResourceVersion())
	if _, err := k.store.Update(u, status); err != nil {
		k.opts.Log.Debug(logMsg, append(logArgs, "err", err)...)
		return false
	}
	return true
}

// templateHash names a Deployment's Pods after what they run, as pod-template-hash does.
func templateHash(t corev1.PodTemplateSpec) string {
	h := fnv.New32a()
	u, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&t)
	fmt.Fprintf(h, "%v", u)
	return strconv.FormatUint(uint64(h.Sum32()), 36)
}

func (k *Kubelet) reconcilePods() {
	want := map[kubeapi.Key]bool{}
	for _, du := range k.store.List(gkDeployment, "", nil, "apps/v1") {
		d, err := decode[appsv1.Deployment](du)
		if err != nil {
			k.fail("Deployment %s/%s: %v", du.GetNamespace(), du.GetName(), err)
			continue
		}
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		hash := templateHash(d.Spec.Template)
		ready := int32(0)
		for i := range replicas {
			name := fmt.Sprintf("%s-%s-%s", d.Name, hash, suffix(d.Name, hash, int(i)))
			key := kubeapi.Key{GroupKind: gkPod, Namespace: d.Namespace, Name: name}
			want[key] = true
			if k.ensurePod(d, key, hash) {
				ready++
			}
		}
		k.deploymentStatus(du, d, replicas, ready)
	}
	// Pods of Deployments that are gone or changed their template.
	for _, pu := range k.store.List(gkPod, "", nil, "v1") {
		key := kubeapi.Key{GroupKind: gkPod, Namespace: pu.GetNamespace(), Name: pu.GetName()}
		if !want[key] && pu.GetLabels()["pod-template-hash"] != "" {
			_, _ = k.store.Delete(key)
		}
	}
	k.mu.Lock()
	var gone []*podProcess
	for key, p := range k.pods {
		if !want[key] {
			gone = append(gone, p)
			delete(k.pods, key)
		}
	}
	k.mu.Unlock()
	for _, p := range gone {
		p.stop()
	}
}

// suffix is the five-character tail of a Pod name, stable per Deployment and index.
func suffix(deploy, hash string, i int) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s/%d", deploy, hash, i)
	s := strconv.FormatUint(uint64(h.Sum32()), 36)
	for len(s) < 5 {
		s = "0" + s
	}
	return s[:5]
}

// ensurePod creates the Pod when it is missing and starts its process when it is not
// running; it reports whether the Pod is Ready. A Pod whose process cannot start yet (its
// Secret volume does not exist) stays Pending and is tried again on the next change, as a
// kubelet retries a Pod stuck in ContainerCreating.
func (k *Kubelet) ensurePod(d *appsv1.Deployment, key kubeapi.Key, hash string) bool {
	u, err := k.store.Get(key, "v1")
	if err != nil {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: key.Name, Namespace: key.Namespace,
				Labels:      maps.Clone(d.Spec.Template.Labels),
				Annotations: maps.Clone(d.Spec.Template.Annotations),
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "apps/v1", Kind: "ReplicaSet", Name: d.Name + "-" + hash, UID: d.UID,
					Controller: new(true),
				}},
			},
			Spec: *d.Spec.Template.Spec.DeepCopy(),
		}
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels["pod-template-hash"] = hash
		pod.Spec.NodeName = NodeName
		if u, err = encode(pod, "v1", "Pod"); err == nil {
			u, err = k.store.Create(u)
		}
		if err != nil {
			k.fail("creating Pod %s: %v", key, err)
			return false
		}
	}
	pod, err := decode[corev1.Pod](u)
	if err != nil {
		return false
	}
	if podReady(pod) {
		return true
	}
	k.mu.Lock()
	ip, ok := k.ips[key]
	if !ok {
		ip = k.opts.PodIP()
		k.ips[key] = ip
	}
	running := k.pods[key] != nil
	k.mu.Unlock()
	var start func(*corev1.Pod, string) (*podProcess, error)
	switch {
	case k.opts.Backend == "" || running:
	case runsCoreDNS(pod):
		start = k.startCoreDNS
	case !runsEchoBasic(pod):
		// Only the suite's own images run here: the Pod is Ready with nothing behind it.
		k.failOnce(key,
			fmt.Errorf("image %s is not run offline (only echo-basic and CoreDNS's whoami are)", pod.Spec.Containers[0].Image))
	default:
		start = k.startProcess
	}
	if start != nil {
		proc, err := start(pod, ip)
		if err != nil {
			k.failOnce(key, err)
			return false
		}
		k.mu.Lock()
		k.pods[key] = proc
		k.mu.Unlock()
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
	}
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{cond(corev1.PodInitialized), cond(corev1.PodReady), cond(corev1.ContainersReady),
			cond(corev1.PodScheduled)},
		HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}}, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		StartTime: &now,
	}
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return k.updateFrom(u, pod, "v1", "Pod", true, "Pod status", "pod", key.String())
}

// failOnce records a Pod's problem the first time it is met (a Pod waiting for its
// Secret is tried on every change).
func (k *Kubelet) failOnce(key kubeapi.Key, err error) {
	k.mu.Lock()
	seen := k.pending[key] == err.Error()
	k.pending[key] = err.Error()
	k.mu.Unlock()
	if !seen {
		k.opts.Log.Debug("Pod not started yet", "pod", key.String(), "err", err)
	}
}

// runsEchoBasic says whether the Pod's first container is the suite's echo-basic.
func runsEchoBasic(p *corev1.Pod) bool {
	return len(p.Spec.Containers) > 0 && strings.Contains(p.Spec.Containers[0].Image, "/echo-basic")
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (k *Kubelet) deploymentStatus(du *unstructured.Unstructured, d *appsv1.Deployment, replicas, ready int32) {
	st := appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: replicas,
		ReadyReplicas: ready, AvailableReplicas: ready, UnavailableReplicas: replicas - ready,
	}
	avail := corev1.ConditionFalse
	if ready == replicas {
		avail = corev1.ConditionTrue
	}
	// Keep the transition times of conditions that did not change.
	old := map[appsv1.DeploymentConditionType]appsv1.DeploymentCondition{}
	for _, c := range d.Status.Conditions {
		old[c.Type] = c
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for _, c := range []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: avail, Reason: "MinimumReplicasAvailable",
			Message: "Deployment has minimum availability."},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
			Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", d.Name)},
	} {
		c.LastUpdateTime, c.LastTransitionTime = now, now
		if o, ok := old[c.Type]; ok && o.Status == c.Status {
			c.LastUpdateTime, c.LastTransitionTime = o.LastUpdateTime, o.LastTransitionTime
		}
		st.Conditions = append(st.Conditions, c)
	}
	d.Status = st
	k.updateFrom(du, d, "apps/v1", "Deployment", true, "Deployment status", "deployment", d.Namespace+"/"+d.Name)
}

func (k *Kubelet) reconcileServices() {
	slicesBySvc := map[string][]*unstructured.Unstructured{}
	for _, eu := range k.store.List(gkEndpointSlice, "", nil, "discovery.k8s.io/v1") {
		if eu.GetLabels()[managedByLabel] == managedBy {
			svc := eu.GetNamespace() + "/" + eu.GetLabels()[discoveryv1.LabelServiceName]
			slicesBySvc[svc] = append(slicesBySvc[svc], eu)
		}
	}
	var pods []*corev1.Pod
	for _, pu := range k.store.List(gkPod, "", nil, "v1") {
		if p, err := decode[corev1.Pod](pu); err == nil {
			pods = append(pods, p)
		}
	}
	seen := map[string]bool{}
	for _, su := range k.store.List(gkService, "", nil, "v1") {
		svc, err := decode[corev1.Service](su)
		if err != nil {
			k.fail("Service %s/%s: %v", su.GetNamespace(), su.GetName(), err)
			continue
		}
		id := svc.Namespace + "/" + svc.Name
		seen[id] = true
		k.ensureClusterIP(su, svc)
		if svc.Spec.Selector == nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		k.ensureSlice(svc, pods, slicesBySvc[id])
		k.syncProxy(svc, pods)
	}
	for id, list := range slicesBySvc {
		if !seen[id] {
			for _, eu := range list {
				_, _ = k.store.Delete(kubeapi.Key{GroupKind: gkEndpointSlice, Namespace: eu.GetNamespace(), Name: eu.GetName()})
			}
		}
	}
}

func (k *Kubelet) ensureClusterIP(su *unstructured.Unstructured, svc *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.ClusterIP != "" {
		return
	}
	k.mu.Lock()
	k.clusterIP++
	n := k.clusterIP
	k.mu.Unlock()
	ip := fmt.Sprintf("10.96.%d.%d", n/250, n%250+1)
	if k.opts.ServiceIP != nil {
		ip = k.opts.ServiceIP()
	}
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	svc.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicySingleStack)
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	k.updateFrom(su, svc, "v1", "Service", false, "Service ClusterIP", "service", svc.Namespace+"/"+svc.Name)
}

// ensureSlice keeps one managed EndpointSlice per Service: its Ready Pods, its ports'
// target ports.
func (k *Kubelet) ensureSlice(svc *corev1.Service, pods []*corev1.Pod, existing []*unstructured.Unstructured) {
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	var eps []discoveryv1.Endpoint
	var members []*corev1.Pod
	for _, p := range pods {
		if p.Namespace != svc.Namespace || !sel.Matches(labels.Set(p.Labels)) || p.Status.PodIP == "" {
			continue
		}
		members = append(members, p)
		ready := podReady(p)
		eps = append(eps, discoveryv1.Endpoint{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: new(ready), Serving: new(ready), Terminating: new(false)},
			NodeName:   new(p.Spec.NodeName),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		})
	}
	var ports []discoveryv1.EndpointPort
	for _, sp := range svc.Spec.Ports {
		port, ok := targetPort(sp, members)
		if !ok {
			continue
		}
		ports = append(ports,
			discoveryv1.EndpointPort{Name: new(sp.Name), Port: new(port), Protocol: new(sp.Protocol),
				AppProtocol: sp.AppProtocol})
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name + "-" + suffix(svc.Name, "slice", 0), Namespace: svc.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name, managedByLabel: managedBy},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
				Controller: new(true)}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       ports,
	}
	u, err := encode(slice, "discovery.k8s.io/v1", "EndpointSlice")
	if err != nil {
		return
	}
	for _, e := range existing {
		if e.GetName() == slice.Name {
			u.SetResourceVersion(e.GetResourceVersion())
			u.SetCreationTimestamp(e.GetCreationTimestamp())
			if _, err := k.store.Update(u, false); err != nil {
				k.opts.Log.Debug("EndpointSlice", "slice", slice.Namespace+"/"+slice.Name, "err", err)
			}
			return
		}
	}
	if _, err := k.store.Create(u); err != nil {
		k.fail("EndpointSlice %s/%s: %v", slice.Namespace, slice.Name, err)
	}
}

// targetPort resolves a Service port's target: a number, or a name the Pods declare.
func targetPort(sp corev1.ServicePort, pods []*corev1.Pod) (int32, bool) {
	tp := sp.TargetPort
	switch {
	case tp.Type == intstr.Int && tp.IntVal != 0:
		return tp.IntVal, true
	case tp.Type == intstr.String && tp.StrVal != "":
		for _, p := range pods {
			for _, c := range p.Spec.Containers {
				for _, cp := range c.Ports {
					if cp.Name == tp.StrVal {
						return cp.ContainerPort, true
					}
				}
			}
		}
		return 0, false
	}
	return sp.Port, true
}

// Logs is a Pod's process output (the API's pods/log).
func (k *Kubelet) Logs(namespace, pod string) ([]byte, error) {
	k.mu.Lock()
	p := k.pods[kubeapi.Key{GroupKind: gkPod, Namespace: namespace, Name: pod}]
	k.mu.Unlock()
	if p == nil {
		return nil, fmt.Errorf("pod %s/%s runs no process here", namespace, pod)
	}
	return p.logs(), nil
}

func (k *Kubelet) stopAll() {
	k.mu.Lock()
	procs := slices.Collect(maps.Values(k.pods))
	k.pods = map[kubeapi.Key]*podProcess{}
	k.mu.Unlock()
	for _, p := range procs {
		p.stop()
	}
}

func kubeKeyOfService(svc *corev1.Service) kubeapi.Key {
	return kubeapi.Key{GroupKind: gkService, Namespace: svc.Namespace, Name: svc.Name}
}
