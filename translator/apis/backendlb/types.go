// Package backendlb holds the BackendLBPolicy type (gateway.networking.k8s.io/v1alpha2) as
// seed 002 describes it: session persistence, load balancing and a circuit breaker for the
// Services it targets. No dependency provides it: Gateway API had an experimental
// BackendLBPolicy (session persistence only) that v1.3 renamed XBackendTrafficPolicy
// (CHANGELOG/1.3-CHANGELOG.md in gateway-api v1.6.1), and EG v1.9 reads neither. The field
// names, session_persistence included, are the seed's, so its example loads as written.
package backendlb

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GroupVersion is where the seed places the kind.
var GroupVersion = schema.GroupVersion{Group: "gateway.networking.k8s.io", Version: "v1alpha2"}

// AddToScheme registers BackendLBPolicy beside Gateway API's v1alpha2 kinds.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &BackendLBPolicy{}, &BackendLBPolicyList{})
	return nil
}

// BackendLBPolicy tunes how traffic reaches the Services it targets (in its namespace).
type BackendLBPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BackendLBPolicySpec `json:"spec"`
	Status            BackendLBStatus     `json:"status,omitempty"`
}

// BackendLBPolicySpec: the three features are optional; a policy with none has no effect.
type BackendLBPolicySpec struct {
	TargetRefs         []gwapiv1.LocalPolicyTargetReference `json:"targetRefs"`
	SessionPersistence *SessionPersistence                  `json:"session_persistence,omitempty"`
	LoadBalancing      *LoadBalancing                       `json:"loadBalancing,omitempty"`
	CircuitBreaker     *CircuitBreaker                      `json:"circuitBreaker,omitempty"`
}

// SessionPersistence pins a client to one backend for a session, by cookie.
type SessionPersistence struct {
	SessionName     string            `json:"sessionName,omitempty"`
	Type            string            `json:"type,omitempty"` // only Cookie
	AbsoluteTimeout *gwapiv1.Duration `json:"absoluteTimeout,omitempty"`
	IdleTimeout     *gwapiv1.Duration `json:"idleTimeout,omitempty"`
	Cookie          *CookieConfig     `json:"cookie,omitempty"`
}

// CookieConfig: lifetimeType Session (a browser-session cookie) or Permanent.
type CookieConfig struct {
	LifetimeType string `json:"lifetimeType,omitempty"`
}

// LoadBalancing replaces the default weighted round robin.
type LoadBalancing struct {
	Type           string          `json:"type,omitempty"` // RoundRobin, ConsistentHash, LeastRequest, Random
	ConsistentHash *ConsistentHash `json:"consistentHash,omitempty"`
}

// ConsistentHash says what the hash is taken of.
type ConsistentHash struct {
	KeyType    string `json:"keyType,omitempty"` // SourceIP, Header, Hostname
	HeaderName string `json:"headerName,omitempty"`
}

// CircuitBreaker caps concurrent requests; 0 or unset turns it off.
type CircuitBreaker struct {
	MaxInflightRequests *int32 `json:"maxInflightRequests,omitempty"`
}

// BackendLBStatus reports resolution in conditions (Accepted, Conflicted, Invalid,
// TargetNotFound).
type BackendLBStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BackendLBPolicyList is the list kind the scheme expects beside the object.
type BackendLBPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackendLBPolicy `json:"items"`
}

// DeepCopyObject copies through JSON: the type is small and has no generated deep copy.
func (p *BackendLBPolicy) DeepCopyObject() runtime.Object {
	out := &BackendLBPolicy{}
	copyJSON(p, out)
	return out
}

// DeepCopyObject copies through JSON, as for BackendLBPolicy.
func (l *BackendLBPolicyList) DeepCopyObject() runtime.Object {
	out := &BackendLBPolicyList{}
	copyJSON(l, out)
	return out
}

func copyJSON(in, out any) {
	b, err := json.Marshal(in)
	if err != nil {
		panic(err) // plain structs always marshal
	}
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
}
