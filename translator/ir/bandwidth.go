package ir

// BandwidthLimit is a BackendTrafficPolicy's bandwidthLimit on a route: Envoy's
// bandwidth_limit filter, once for requests and once for responses.
type BandwidthLimit struct {
	Request  *BandwidthLimitConfig `json:"request,omitempty"`
	Response *BandwidthLimitConfig `json:"response,omitempty"`
}

// BandwidthLimitConfig is one direction's limit in KiB/s; Trailers (responses only) adds
// the filter's delay trailers, named with TrailerPrefix.
type BandwidthLimitConfig struct {
	KiBps         uint64 `json:"kibps"`
	Trailers      bool   `json:"trailers,omitempty"`
	TrailerPrefix string `json:"trailerPrefix,omitempty"`
}
