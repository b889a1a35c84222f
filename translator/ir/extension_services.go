package ir

import (
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// The policy features that call an external service: a SecurityPolicy's extAuth and an
// EnvoyExtensionPolicy's extProc, resolved by the policy stage. The service itself (its
// cluster and authority) is in PolicyData.ExtAuth and PolicyData.ExtProc.

// ExtAuth is a SecurityPolicy's extAuth. FilterName is the listener filter's (after the
// policy that declared extAuth); Timeout has EG's default when unset.
type ExtAuth struct {
	FilterName           string `json:"filterName"`
	FailOpen             bool   `json:"failOpen,omitempty"`
	RecomputeRoute       bool   `json:"recomputeRoute,omitempty"`
	IncludeRouteMetadata bool   `json:"includeRouteMetadata,omitempty"`
	// MaxRequestBytes, when set, sends the request body up to that size.
	MaxRequestBytes  *uint32       `json:"maxRequestBytes,omitempty"`
	HeadersToExtAuth []string      `json:"headersToExtAuth,omitempty"`
	Timeout          time.Duration `json:"timeout"`
	StatusOnError    *int32        `json:"statusOnError,omitempty"`
	// HTTP is set for an HTTP service, nil for a gRPC one.
	HTTP *ExtAuthHTTP `json:"http,omitempty"`
	// Cluster is the backendSettings of the service's cluster, Retry its retry of calls.
	Cluster *ClusterSettings `json:"cluster,omitempty"`
	Retry   *ServiceRetry    `json:"retry,omitempty"`
}

// ExtAuthHTTP is an HTTP authorization service: the path prefix of its checks or the path
// that replaces the request's, and the headers of its answer passed to the backend.
type ExtAuthHTTP struct {
	PathPrefix       string   `json:"pathPrefix,omitempty"`
	PathOverride     string   `json:"pathOverride,omitempty"`
	HeadersToBackend []string `json:"headersToBackend,omitempty"`
}

// ExtProc is one extProc entry of an EnvoyExtensionPolicy. FilterName is its listener
// filter's (after the policy that declared extProc and the entry's index); MessageTimeout
// is nil when unset or not a duration.
type ExtProc struct {
	FilterName     string                `json:"filterName"`
	ShadowMode     bool                  `json:"shadowMode,omitempty"`
	FailOpen       bool                  `json:"failOpen,omitempty"`
	MessageTimeout *time.Duration        `json:"messageTimeout,omitempty"`
	ProcessingMode ExtProcProcessingMode `json:"processingMode"`
	// ForwardingNamespaces and ReceivingNamespaces are the metadata namespaces the
	// processor may read and write, each nil when not given.
	ForwardingNamespaces *MetadataNamespaces `json:"forwardingNamespaces,omitempty"`
	ReceivingNamespaces  *MetadataNamespaces `json:"receivingNamespaces,omitempty"`
	StatusOnError        *int32              `json:"statusOnError,omitempty"`
	Cluster              *ClusterSettings    `json:"cluster,omitempty"`
	Retry                *ServiceRetry       `json:"retry,omitempty"`
}

// MetadataNamespaces are untyped metadata namespaces.
type MetadataNamespaces struct {
	Untyped []string `json:"untyped,omitempty"`
}

// ExtProcProcessingMode is what the processor sees of requests and of responses (nil:
// nothing), and whether it may change that per message.
type ExtProcProcessingMode struct {
	Request           *ExtProcPhase `json:"request,omitempty"`
	Response          *ExtProcPhase `json:"response,omitempty"`
	AllowModeOverride bool          `json:"allowModeOverride,omitempty"`
}

// ExtProcPhase sends the headers, the body in BodyMode (one of the ExtProcBody… values,
// "" for none) and the attributes named.
type ExtProcPhase struct {
	BodyMode   string   `json:"bodyMode,omitempty"`
	Attributes []string `json:"attributes,omitempty"`
}

// The body modes of ext_proc, as EG spells them.
const (
	ExtProcBodyBuffered           = string(egv1a1.BufferedExtProcBodyProcessingMode)
	ExtProcBodyBufferedPartial    = string(egv1a1.BufferedPartialExtBodyHeaderProcessingMode)
	ExtProcBodyStreamed           = string(egv1a1.StreamedExtProcBodyProcessingMode)
	ExtProcBodyFullDuplexStreamed = string(egv1a1.FullDuplexStreamedExtBodyProcessingMode)
)
