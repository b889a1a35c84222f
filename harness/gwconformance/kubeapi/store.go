// Package kubeapi is the Kubernetes API side of the offline conformance run: an in-memory
// object store with the API server's write semantics (uid, creationTimestamp, generation
// bumped on spec changes only, status kept apart as a subresource, resourceVersion
// conflicts, the real CRDs' validation and defaults) and a REST facade over it, so that the
// Gateway API conformance suite's own clients (controller-runtime's and client-go's, which
// the suite rebuilds from a rest.Config for every test) talk to it unchanged.
//
// It is not an API server: no watch, no garbage collection, no server-side apply, no
// admission webhooks. The suite needs none of them (it reads status, it never watches).
package kubeapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Key names one stored object: its group/kind (any version: every kind here converts by
// apiVersion only), namespace and name.
type Key struct {
	GroupKind schema.GroupKind
	Namespace string
	Name      string
}

func (k Key) String() string {
	if k.Namespace == "" {
		return k.GroupKind.String() + "/" + k.Name
	}
	return k.GroupKind.String() + "/" + k.Namespace + "/" + k.Name
}

// Admitter validates and defaults a create or update of a CRD-defined object, as the API
// server does with the CRD's schema. It returns the object as stored, or the refusal.
type Admitter interface {
	Governs(group string) bool
	Admit(obj map[string]any) (stored map[string]any, refusal string, err error)
}

// Store holds objects by Key. Every write gets the next resourceVersion and tells the
// subscribers.
type Store struct {
	admit Admitter
	// statusKinds have a status subresource: a write of the object keeps the stored status
	// and a write of its status keeps the rest.
	statusKinds map[schema.GroupKind]bool
	now         func() time.Time

	mu      sync.RWMutex
	objects map[Key]map[string]any
	rv      int64
	subs    []chan struct{}
}

// NewStore makes an empty store. admit may be nil (nothing is validated).
func NewStore(admit Admitter, statusKinds []schema.GroupKind) *Store {
	s := &Store{admit: admit, statusKinds: map[schema.GroupKind]bool{}, now: time.Now, objects: map[Key]map[string]any{}}
	for _, gk := range statusKinds {
		s.statusKinds[gk] = true
	}
	return s
}

// Subscribe returns a channel that receives (without blocking the writer; changes
// coalesce) after every write.
func (s *Store) Subscribe() <-chan struct{} {
	c := make(chan struct{}, 1)
	s.mu.Lock()
	s.subs = append(s.subs, c)
	s.mu.Unlock()
	return c
}

func (s *Store) notifyLocked() {
	for _, c := range s.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// ResourceVersion is the store's latest resourceVersion.
func (s *Store) ResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return strconv.FormatInt(s.rv, 10)
}

func keyOf(u *unstructured.Unstructured) Key {
	return Key{GroupKind: u.GroupVersionKind().GroupKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

func grOf(gk schema.GroupKind) schema.GroupResource {
	return schema.GroupResource{Group: gk.Group, Resource: strings.ToLower(gk.Kind)}
}

// Get returns a copy of the object, in apiVersion (the stored one when empty).
func (s *Store) Get(k Key, apiVersion string) (*unstructured.Unstructured, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	o, ok := s.objects[k]
	if !ok {
		return nil, apierrors.NewNotFound(grOf(k.GroupKind), k.Name)
	}
	return copyAs(o, apiVersion), nil
}

func copyAs(o map[string]any, apiVersion string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: deepCopy(o)}
	if apiVersion != "" {
		u.SetAPIVersion(apiVersion)
	}
	return u
}

// List returns copies of the objects of gk in namespace ns ("" for all) that match sel,
// sorted by namespace and name.
func (s *Store) List(gk schema.GroupKind, ns string, sel labels.Selector,
	apiVersion string) []*unstructured.Unstructured {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var keys []Key
	for k := range s.objects {
		if k.GroupKind == gk && (ns == "" || k.Namespace == ns) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	var out []*unstructured.Unstructured
	for _, k := range keys {
		u := copyAs(s.objects[k], apiVersion)
		if sel != nil && !sel.Matches(labels.Set(u.GetLabels())) {
			continue
		}
		out = append(out, u)
	}
	return out
}

// All returns copies of every stored object, sorted by key.
func (s *Store) All() []*unstructured.Unstructured {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := slices.Collect(maps.Keys(s.objects))
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.String(), b.String()) })
	out := make([]*unstructured.Unstructured, len(keys))
	for i, k := range keys {
		out[i] = copyAs(s.objects[k], "")
	}
	return out
}

// Create stores a new object: name from generateName when it has none, system fields set,
// status dropped where status is a subresource, the CRD's defaults and validation applied.
func (s *Store) Create(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.GetName() == "" && u.GetGenerateName() != "" {
		u.SetName(u.GetGenerateName() + uuid.NewString()[:5])
	}
	if u.GetName() == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: metadata.name is required", u.GetKind()))
	}
	k := keyOf(u)
	if _, ok := s.objects[k]; ok {
		return nil, apierrors.NewAlreadyExists(grOf(k.GroupKind), k.Name)
	}
	if k.Namespace != "" && k.GroupKind.Kind != "Namespace" {
		nsKey := Key{GroupKind: schema.GroupKind{Kind: "Namespace"}, Name: k.Namespace}
		if ns, ok := s.objects[nsKey]; ok && isTerminating(ns) {
			return nil, apierrors.NewForbidden(grOf(k.GroupKind), k.Name,
				fmt.Errorf("unable to create new content in namespace %s because it is being terminated", k.Namespace))
		}
	}
	if s.statusKinds[k.GroupKind] {
		delete(u.Object, "status")
	}
	if err := s.admitLocked(u); err != nil {
		return nil, err
	}
	u.SetUID(types.UID(uuid.NewString()))
	u.SetCreationTimestamp(metav1.NewTime(s.now().Truncate(time.Second)))
	u.SetGeneration(1)
	u.SetResourceVersion("")
	return s.putLocked(k, u), nil
}

// Update replaces an object. With status false it is a write of the object (the stored
// status is kept; generation goes up when anything but metadata and status changed); with
// status true a write of the status subresource (only status is taken). A resourceVersion
// that is set must be the stored one.
func (s *Store) Update(u *unstructured.Unstructured, status bool) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := keyOf(u)
	old, ok := s.objects[k]
	if !ok {
		return nil, apierrors.NewNotFound(grOf(k.GroupKind), k.Name)
	}
	oldU := &unstructured.Unstructured{Object: old}
	if rv := u.GetResourceVersion(); rv != "" && rv != oldU.GetResourceVersion() {
		return nil, apierrors.NewConflict(grOf(k.GroupKind), k.Name,
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	next := u
	if status {
		next = copyAs(old, u.GetAPIVersion())
		if st, ok := u.Object["status"]; ok {
			next.Object["status"] = st
		} else {
			delete(next.Object, "status")
		}
	} else {
		if s.statusKinds[k.GroupKind] {
			if st, ok := old["status"]; ok {
				u.Object["status"] = deepCopy(map[string]any{"s": st})["s"]
			} else {
				delete(u.Object, "status")
			}
		}
		if err := s.admitLocked(u); err != nil {
			return nil, err
		}
		u.SetUID(oldU.GetUID())
		u.SetCreationTimestamp(oldU.GetCreationTimestamp())
		gen := oldU.GetGeneration()
		if specChanged(old, u.Object) {
			gen++
		}
		u.SetGeneration(gen)
		if oldU.GetDeletionTimestamp() != nil {
			u.SetDeletionTimestamp(oldU.GetDeletionTimestamp())
		}
	}
	if reflect.DeepEqual(withoutRV(old), withoutRV(next.Object)) {
		return copyAs(old, u.GetAPIVersion()), nil // a no-op write keeps its resourceVersion
	}
	return s.putLocked(k, next), nil
}

// Delete removes an object; a Namespace takes its contents with it.
func (s *Store) Delete(k Key) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[k]
	if !ok {
		return nil, apierrors.NewNotFound(grOf(k.GroupKind), k.Name)
	}
	delete(s.objects, k)
	if k.GroupKind == (schema.GroupKind{Kind: "Namespace"}) {
		for ok := range s.objects {
			if ok.Namespace == k.Name {
				delete(s.objects, ok)
			}
		}
	}
	s.rv++
	s.notifyLocked()
	return copyAs(o, ""), nil
}

func (s *Store) putLocked(k Key, u *unstructured.Unstructured) *unstructured.Unstructured {
	s.rv++
	u.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	s.objects[k] = deepCopy(u.Object)
	s.notifyLocked()
	return copyAs(u.Object, "")
}

// admitLocked runs the CRD's validation and defaults on an object of a CRD-defined group;
// the object is replaced by what the API server would store (in its own apiVersion).
func (s *Store) admitLocked(u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	if s.admit == nil || !s.admit.Governs(gvk.Group) {
		return nil
	}
	// Validation sees the object without its status (a subresource the create ignores).
	probe := deepCopy(u.Object)
	status, hasStatus := probe["status"]
	delete(probe, "status")
	stored, refusal, err := s.admit.Admit(probe)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if refusal != "" {
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: refusal,
			Details: &metav1.StatusDetails{Group: gvk.Group, Kind: gvk.Kind, Name: u.GetName()},
		}}
	}
	stored["apiVersion"] = u.GetAPIVersion()
	if hasStatus {
		stored["status"] = status
	}
	// Metadata the schema does not govern (generation, resourceVersion...) is kept.
	u.Object = stored
	return nil
}

func isTerminating(o map[string]any) bool {
	return (&unstructured.Unstructured{Object: o}).GetDeletionTimestamp() != nil
}

// specChanged reports whether anything but metadata and status differs.
func specChanged(a, b map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				out[k] = v
			}
		}
		return out
	}
	return !reflect.DeepEqual(strip(a), strip(b))
}

func withoutRV(m map[string]any) map[string]any {
	c := deepCopy(m)
	if md, ok := c["metadata"].(map[string]any); ok {
		delete(md, "resourceVersion")
		delete(md, "managedFields")
	}
	delete(c, "apiVersion")
	return c
}

// deepCopy copies a JSON object by value (numbers stay int64/float64 as the JSON decoder
// made them).
func deepCopy(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("kubeapi: an object that cannot be marshalled: %v", err))
	}
	var out map[string]any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("kubeapi: %v", err))
	}
	return out
}
