package ir

// BackendLB is the BackendLBPolicy resolved for a backend (BLP-08): only the features the
// winning policy sets appear.
type BackendLB struct {
	// Policy is the winning BackendLBPolicy, <namespace>/<name>.
	Policy             string              `json:"lbPolicy"`
	LoadBalancing      *LoadBalancing      `json:"loadBalancing,omitempty"`
	SessionPersistence *SessionPersistence `json:"session_persistence,omitempty"`
	CircuitBreaker     *CircuitBreaker     `json:"circuitBreaker,omitempty"`
}

// LoadBalancing: Type is RoundRobin (also when the policy names none), ConsistentHash,
// LeastRequest or Random; the hash key only for ConsistentHash.
type LoadBalancing struct {
	Type       string `json:"type"`
	HashKey    string `json:"hashKey,omitempty"` // SourceIP, Header, Hostname
	HashHeader string `json:"hashHeader,omitempty"`
}

// SessionPersistence is cookie affinity. Permanent cookies live AbsoluteTimeout; session
// cookies end with the browser session.
type SessionPersistence struct {
	CookieName      string `json:"cookieName"`
	Permanent       bool   `json:"permanent,omitempty"`
	AbsoluteTimeout string `json:"absoluteTimeout,omitempty"`
	IdleTimeout     string `json:"idleTimeout,omitempty"`
}

// CircuitBreaker caps concurrent requests to the backend; over it Envoy answers 503.
type CircuitBreaker struct {
	MaxInflightRequests uint32 `json:"maxInflightRequests"`
}
