// Package gwconformance runs Gateway API's own conformance suite
// (sigs.k8s.io/gateway-api/conformance, the version go.mod requires, unmodified) against an
// implementation with no cluster: the suite's clients talk to an in-process API
// (kubeapi), a kubelet stand-in runs the suite's backends (kubelet), the Controller here
// hands every change to the implementation under test and writes its statuses back, and a
// real Envoy fed by the translation carries the suite's requests (DataPlane).
package gwconformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/harness/gwconformance/kubeapi"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// ControllerName is EG's: GatewayClasses naming it are the implementation's.
const ControllerName = "gateway.envoyproxy.io/gatewayclass-controller"

// DataPlane serves a translation's xDS. Apply returns once the data plane took it (or
// refused it: the error says why); gateways maps each Gateway (namespace/name) to the
// address its listeners bind.
type DataPlane interface {
	Apply(ctx context.Context, x *result.XDS, gateways map[string]GatewayAddress) error
}

// GatewayAddress is where one Gateway listens: an address of its own and each listener's
// spec port by the port the translation gives it.
type GatewayAddress struct {
	IP string
	// Ports maps the port a translation gives a listener to the port its spec names,
	// where they differ (EG shifts ports below 1024 by 10000).
	Ports map[uint32]uint32
	// Static are the IP addresses the Gateway's spec.addresses asks for (its status
	// shows them instead of IP); NotUsable says the spec also asks for an address EG
	// cannot assign (a Hostname).
	Static    []string
	NotUsable bool
}

// Controller translates the stored objects on every change and writes the statuses back.
type Controller struct {
	Store   *kubeapi.Store
	Impl    impl.Implementation
	Config  config.Config
	Profile profile.Profile
	Plane   DataPlane // nil: statuses only
	// GatewayIP hands out the address of a new Gateway.
	GatewayIP func() string
	Log       *slog.Logger
	// Debounce is how long the controller waits for writes to settle (default 20ms).
	Debounce time.Duration

	mu        sync.Mutex
	lastInput [32]byte
	addresses map[string]string // Gateway namespace/name → address
	errs      []string
	rounds    int
	// pending is the newest translation the data plane has not taken yet; wake tells
	// the worker that applies them.
	pending *pendingXDS
	wake    chan struct{}
}

// Run reconciles on every change until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Debounce == 0 {
		c.Debounce = 20 * time.Millisecond
	}
	changed := c.Store.Subscribe()
	for {
		c.Reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		// Writes come in bursts (a manifest applied object by object): wait until they settle.
		for settled := false; !settled; {
			select {
			case <-ctx.Done():
				return
			case <-changed:
			case <-time.After(c.Debounce):
				settled = true
			}
		}
	}
}

// Errors are the translations that failed, newest last.
func (c *Controller) Errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.errs)
}

// Rounds is how many translations the controller ran.
func (c *Controller) Rounds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rounds
}

func (c *Controller) fail(err error) {
	c.Log.Warn("translation failed", "err", err)
	c.mu.Lock()
	c.errs = append(c.errs, err.Error())
	if len(c.errs) > 100 {
		c.errs = c.errs[len(c.errs)-100:]
	}
	c.mu.Unlock()
}

// inputKinds are the stored kinds an implementation reads; the rest (Pods, Deployments,
// CRDs...) are the cluster's business.
func inputKind(u *unstructured.Unstructured) bool {
	switch u.GetKind() {
	case "Pod", "Node", "CustomResourceDefinition", "Endpoints":
		return false
	}
	return resource.KnownKind(u.GetAPIVersion(), u.GetKind())
}

// Input is the stored objects an implementation is given, as YAML documents in key order:
// status, resourceVersion and managedFields left out (they are not the implementation's
// input, and a status write must not look like a change).
func Input(store *kubeapi.Store) []byte {
	in, _ := snapshot(store)
	return in
}

// snapshot is Input and the generation of every stored object, from one read of the store.
func snapshot(store *kubeapi.Store) ([]byte, map[string]int64) {
	var buf bytes.Buffer
	gens := map[string]int64{}
	for _, u := range store.All() {
		gens[objectID(u.GetKind(), u.GetNamespace(), u.GetName())] = u.GetGeneration()
		if !inputKind(u) {
			continue
		}
		delete(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			continue
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return buf.Bytes(), gens
}

// Reconcile translates what is stored now, when it changed since the last translation.
func (c *Controller) Reconcile(ctx context.Context) {
	// The generations the statuses observe are those of the objects translated.
	in, gens := snapshot(c.Store)
	sum := sha256.Sum256(in)
	c.mu.Lock()
	if sum == c.lastInput {
		c.mu.Unlock()
		return
	}
	c.lastInput = sum
	c.rounds++
	c.mu.Unlock()
	dec, err := resource.Decode("cluster", in, resource.Options{SkipUnknownKinds: true})
	if err != nil {
		c.fail(fmt.Errorf("reading the stored objects: %w", err))
		if len(dec.Objects) == 0 {
			return
		}
	}
	res, err := c.Impl.Translate(ctx,
		impl.Request{Scenario: "conformance", Objects: dec.Objects, Config: c.Config, Profile: c.Profile})
	if err != nil {
		c.fail(fmt.Errorf("%s: %w", c.Impl.Name(), err))
		// Nothing to write: the statuses stay as they were, so the suite's waits time out
		// with the last good state rather than a made-up one.
		c.mu.Lock()
		c.lastInput = [32]byte{}
		c.mu.Unlock()
		return
	}
	addrs := c.gatewayAddresses(res)
	// Statuses first, as EG writes them without waiting for its proxies: the suite's
	// traffic checks wait for consistency anyway, and a data plane that is slow to take a
	// translation (listeners warming on secrets an implementation does not print) must not
	// hold the statuses back past the suite's condition timeouts.
	w := statusWriter{store: c.Store, gens: gens, addresses: addrs, now: time.Now().Truncate(time.Second)}
	w.write(res)
	for _, e := range w.errs {
		c.fail(e)
	}
	if c.Plane != nil {
		c.offer(ctx, &res.XDS, addrs)
	}
}

// offer hands the data plane the newest translation without waiting for it: one worker
// applies translations in turn, and one offered while it is busy replaces any still
// waiting (only the latest matters), so a slow data plane never delays the next status.
func (c *Controller) offer(ctx context.Context, x *result.XDS, addrs map[string]GatewayAddress) {
	c.mu.Lock()
	c.pending = &pendingXDS{x: x, addrs: addrs}
	if c.wake == nil {
		c.wake = make(chan struct{}, 1)
		go c.applyLoop(ctx)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

type pendingXDS struct {
	x     *result.XDS
	addrs map[string]GatewayAddress
}

func (c *Controller) applyLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		c.mu.Lock()
		p := c.pending
		c.pending = nil
		c.mu.Unlock()
		if p == nil {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := c.Plane.Apply(pctx, p.x, p.addrs); err != nil && ctx.Err() == nil {
			c.fail(fmt.Errorf("data plane: %w", err))
		}
		cancel()
	}
}

// gatewayAddresses gives every Gateway of the result an address, the same for its life.
func (c *Controller) gatewayAddresses(res *result.Result) map[string]GatewayAddress {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.addresses == nil {
		c.addresses = map[string]string{}
	}
	out := map[string]GatewayAddress{}
	for _, st := range res.Statuses {
		if st.Object.Kind != "Gateway" {
			continue
		}
		id := st.Object.Namespace + "/" + st.Object.Name
		ip, ok := c.addresses[id]
		if !ok && c.GatewayIP != nil {
			ip = c.GatewayIP()
			c.addresses[id] = ip
		}
		a := GatewayAddress{IP: ip, Ports: c.specPorts(st.Object.Namespace, st.Object.Name)}
		a.Static, a.NotUsable = c.specAddresses(st.Object.Namespace, st.Object.Name)
		for _, s := range a.Static {
			// A loopback address the spec asks for is one Envoy can bind here.
			if strings.HasPrefix(s, "127.") {
				a.IP = s
				break
			}
		}
		out[id] = a
	}
	return out
}

// specAddresses are a Gateway's spec.addresses of type IPAddress (the type they default
// to), and whether any is a Hostname, which EG cannot assign: as EG's provider, the IPs
// become the proxy Service's external IPs and the Gateway's status addresses.
func (c *Controller) specAddresses(ns, name string) (ips []string, hostname bool) {
	gw, err := c.Store.Get(
		kubeapi.Key{GroupKind: schema.GroupKind{Group: gatewayGroup, Kind: "Gateway"}, Namespace: ns, Name: name}, "")
	if err != nil {
		return nil, false
	}
	addrs, _, _ := unstructured.NestedSlice(gw.Object, "spec", "addresses")
	for _, a := range addrs {
		m, _ := a.(map[string]any)
		typ, _ := m["type"].(string)
		v, _ := m["value"].(string)
		switch typ {
		case "", "IPAddress":
			ips = append(ips, v)
		case "Hostname":
			hostname = true
		}
	}
	return ips, hostname
}

// specPorts are the privileged ports of a Gateway's listeners (its own and those of the
// ListenerSets naming it), by the port EG's translation binds instead.
func (c *Controller) specPorts(ns, name string) map[uint32]uint32 {
	ports := map[uint32]uint32{}
	add := func(u *unstructured.Unstructured) {
		ls, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
		for _, l := range ls {
			m, _ := l.(map[string]any)
			if p, ok := m["port"].(int64); ok && p > 0 && p < 1024 {
				ports[uint32(p)+10000] = uint32(p)
			}
		}
	}
	if gw, err := c.Store.Get(
		kubeapi.Key{GroupKind: schema.GroupKind{Group: gatewayGroup, Kind: "Gateway"}, Namespace: ns, Name: name},
		""); err == nil {
		add(gw)
	}
	for _, ls := range c.Store.List(schema.GroupKind{Group: gatewayGroup, Kind: "ListenerSet"}, "", nil, "") {
		ref, _, _ := unstructured.NestedMap(ls.Object, "spec", "parentRef")
		pns, _ := ref["namespace"].(string)
		if pns == "" {
			pns = ls.GetNamespace()
		}
		if ref["name"] == name && pns == ns {
			add(ls)
		}
	}
	return ports
}

func objectID(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

// Describe is a one-line account of the controller's work, for the run's summary.
func (c *Controller) Describe() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := fmt.Sprintf("%d translations by %s", c.rounds, c.Impl.Name())
	if len(c.errs) > 0 {
		s += fmt.Sprintf(", %d failed (last: %s)", len(c.errs), strings.SplitN(c.errs[len(c.errs)-1], "\n", 2)[0])
	}
	return s
}
