package upgrade

import (
	"regexp"

	"github.com/egharness/egharness/harness/catalog"
)

// Change is a kind of difference between the two translations.
type Change string

// The kinds of difference upgrade-check finds.
const (
	// Admission: the API server's verdict on an object.
	AdmissionRefused Change = "admission-refused" // admitted before, refused after
	AdmissionAllowed Change = "admission-allowed" // refused before, admitted after

	// Statuses.
	ObjectUnseen      Change = "object-unseen"      // had a status before, none after: no longer processed
	ObjectSeen        Change = "object-seen"        // had no status before, one after
	ConditionLost     Change = "condition-lost"     // Accepted/ResolvedRefs/Programmed True → False
	ConditionGained   Change = "condition-gained"   // the same False → True
	ConditionAdded    Change = "condition-added"    // a condition type appears (e.g. RouteRulesOverlap)
	ConditionRemoved  Change = "condition-removed"  // a condition type disappears
	ConditionChanged  Change = "condition-changed"  // another condition changes status
	ConditionReworded Change = "condition-reworded" // same status, another reason or message
	ParentLost        Change = "parent-lost"        // a route parent or policy ancestor disappears
	ParentGained      Change = "parent-gained"
	AttachedRoutes    Change = "attached-routes" // a Gateway listener's attachedRoutes count changes

	// xDS, matched by identity (see xds.go).
	Renamed      Change = "renamed"       // the same thing under another name
	Moved        Change = "moved"         // the same thing in another place (another key, another resource)
	ShapeChanged Change = "shape-changed" // the same thing configured another way (cluster type, route action)
	FailClosed   Change = "fail-closed"   // a route that forwarded now answers by itself
	Removed      Change = "removed"       // no longer generated
	Added        Change = "added"         // newly generated

	// EnvoyPatchPolicy operations.
	PatchMissed Change = "patch-missed" // hit before, misses after
	PatchHits   Change = "patch-hits"   // missed before, hits after
	// PatchRetargeted: hits on both sides, but what it addressed before moved away, so
	// after it changes (or creates) something else (an add creates the missing path).
	PatchRetargeted Change = "patch-retargeted"

	// Warnings the translation prints.
	WarningAdded Change = "warning-added"
)

// Rule maps a kind of difference to a behavior ID and a severity. Subject narrows it to an
// object kind, a condition type or an xDS entity kind; Match to a message, name or type URL.
type Rule struct {
	Change  Change
	Subject string
	Match   *regexp.Regexp
	// ID is the behavior ID; "" takes the ID the difference's own text names ("(UPG-02)"),
	// or Unmapped.
	ID       string
	Severity Severity
}

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// Rules is the table, first match wins. The explicit rows come from behaviors.md; the
// generic row of each kind of difference comes last.
var Rules = []Rule{
	// Objects the API server starts to refuse: matched on the admission message.
	{AdmissionRefused, "", re(`mergeType can only be used with xRoute targets`), "MRG-01", Breaking},
	{AdmissionRefused, "ClientTrafficPolicy", re(`clientIPDetection`), "CTP-04", Breaking},
	{AdmissionRefused, "SecurityPolicy", re(`extractFrom|apiKeyAuth`), "UPG-03", Breaking},
	{AdmissionRefused, "", re(`unix://|SDS URL|sds url`), "SDS-01", Breaking},
	// A kind or version one release's CRDs serve and the other's do not (UPG-02: TCPRoute
	// and UDPRoute v1 arrive with Gateway API v1.6).
	{AdmissionRefused, "", re(`no matches for kind "(TCPRoute|UDPRoute)"`), "UPG-02", Breaking},
	// The v1.10-preview additions: fields v1.9.1's CRDs do not know (refused going back to
	// v1.9, admitted going forward), and the rule that lua and luaValidation exclude each other.
	{AdmissionRefused, "ClientTrafficPolicy", re(`maxRequestHeaderLimit`), "UPG-04", Breaking},
	{AdmissionRefused, "EnvoyProxy", re(`"spec\.lua"|luaValidation or lua|spec\.lua[.:]`), "EP-02", Breaking},
	{AdmissionRefused, "", nil, "", Breaking},
	{AdmissionAllowed, "", re(`no matches for kind "(TCPRoute|UDPRoute)"`), "UPG-02", Info},
	{AdmissionAllowed, "ClientTrafficPolicy", re(`maxRequestHeaderLimit`), "UPG-04", Info},
	{AdmissionAllowed, "EnvoyProxy", re(`"spec\.lua"`), "EP-02", Info},
	// EG v1.8.0's CRD refused every global or local rate limit rule (envoyproxy/gateway#9186,
	// limit.requests int32 with a uint32 bound); v1.9.1's admits them, in BTP-03's placement.
	{AdmissionAllowed, "BackendTrafficPolicy", re(`limit\.requests`), "BTP-03", Info},
	{AdmissionAllowed, "", re(`mergeType can only be used with xRoute targets`), "MRG-01", Info},
	{AdmissionAllowed, "", nil, "", Info},

	// Objects no longer read at all (TCPRoute/UDPRoute apiVersion).
	{ObjectUnseen, "TCPRoute", nil, "UPG-02", Breaking},
	{ObjectUnseen, "UDPRoute", nil, "UPG-02", Breaking},
	{ObjectUnseen, "", nil, "", Breaking},
	{ObjectSeen, "TCPRoute", nil, "UPG-02", Info},
	{ObjectSeen, "UDPRoute", nil, "UPG-02", Info},
	{ObjectSeen, "", nil, "", Info},

	// Policies that become inert or fail closed, routes no longer accepted.
	{ConditionLost, "EnvoyExtensionPolicy", re(`(?i)lua.*disabled|enableLua`), "EEP-02", Breaking},
	{ConditionLost, "", re(`(?i)system.?ca|system_ca_certificates`), "SDS-03", Breaking},
	{ConditionLost, "", nil, "", Breaking},
	{ConditionGained, "EnvoyPatchPolicy", nil, "EPP-04", Info}, // its patches find their resources now
	// A policy refused for the TCPRoutes of its Gateway is accepted once they are no longer
	// read (UPG-02).
	{ConditionGained, "", re(`(?i)for TCP route|TCPRoute`), "UPG-02", Info},
	{ConditionGained, "", nil, "", Info},
	{ConditionAdded, "RouteRulesOverlap", nil, "RT-11", Warning},
	{ConditionAdded, "Warning", re(`spec\.luaValidation is deprecated`), "EP-02", Warning},
	{ConditionAdded, "", nil, "", Warning},
	{ConditionRemoved, "RouteRulesOverlap", nil, "RT-11", Info},
	{ConditionRemoved, "Warning", re(`spec\.luaValidation is deprecated`), "EP-02", Info},
	{ConditionRemoved, "", nil, "", Info},
	{ConditionChanged, "", nil, "", Warning},
	{ConditionReworded, "", nil, "", Info},
	{ParentLost, "", nil, "", Breaking},
	{ParentGained, "", nil, "", Info},
	{AttachedRoutes, "", nil, "", Warning},

	// xDS names and places (Subject is the entity kind, Match its type URL or name).
	{Renamed, "Listener", nil, "NAME-02", Warning},
	{Renamed, "FilterChain", nil, "NAME-02", Warning},
	{Renamed, "RouteConfiguration", nil, "NAME-02", Warning},
	{Renamed, "VirtualHost", nil, "NAME-02", Warning},
	{Renamed, "Cluster", re(`^pipe:`), "SDS-02", Warning},
	{Renamed, "Secret", re(`system_ca_certificates`), "SDS-03", Warning},
	{Renamed, "JWTProvider", nil, "SP-06", Warning},
	{Renamed, "LuaScript", nil, "EEP-03", Warning},
	{Renamed, "", re(`jwt_authn`), "SP-06", Warning},
	{Renamed, "", re(`filters\.http\.lua`), "EEP-03", Warning},
	{Renamed, "", re(`ratelimit`), "BTP-03", Warning},
	{Renamed, "", nil, "", Warning},
	{Moved, "LuaScript", nil, "EEP-03", Warning},
	{Moved, "RateLimit", nil, "BTP-03", Warning},
	{Moved, "JWTProvider", nil, "SP-06", Warning},
	{Moved, "", nil, "", Warning},
	{ShapeChanged, "Cluster", re(`STRICT_DNS|LOGICAL_DNS|envoy\.cluster\.dns`), "UPG-01", Warning},
	{ShapeChanged, "UpstreamTLS", re(`Version=`), "BTLS-03", Warning},
	{ShapeChanged, "", re(`jwt_authn`), "SP-06", Warning},
	{ShapeChanged, "", re(`filters\.http\.lua`), "EEP-03", Warning},
	{ShapeChanged, "", re(`ratelimit`), "BTP-03", Warning},
	{ShapeChanged, "", nil, "", Info},
	{FailClosed, "", re(`(?i)lua`), "EEP-02", Breaking},
	{FailClosed, "", nil, "", Breaking},
	{Removed, "HTTPFilter", re(`filters\.http\.lua`), "EEP-03", Warning},
	// jwt_authn keeps its name but its providers are keyed differently (SP-06).
	{Removed, "HTTPFilter", re(`jwt_authn`), "SP-06", Warning},
	{Removed, "PerFilterConfig", re(`filters\.http\.lua`), "EEP-03", Warning},
	{Removed, "PerFilterConfig", re(`jwt_authn`), "SP-06", Warning},
	{Removed, "UpstreamTLS", nil, "", Breaking}, // the backend is now reached in plain text
	{Removed, "RateLimit", nil, "BTP-03", Warning},
	{Removed, "PerFilterConfig", re(`ratelimit`), "BTP-03", Warning},
	{Removed, "", nil, "", Warning},
	{Added, "HTTPFilter", re(`jwt_authn`), "SP-06", Info},
	{Added, "PerFilterConfig", re(`jwt_authn`), "SP-06", Info},
	// v1.9 configures global rate limits per domain in typedPerFilterConfig (BTP-03); a
	// route-level rate limit that appears is one a patch made where the rule used to be.
	{Added, "PerFilterConfig", re(`filters\.http\.ratelimit`), "BTP-03", Info},
	{Added, "RateLimit", nil, "BTP-03", Info},
	// Rate limits arriving at all (a policy the old CRDs refused: EG v1.8.0's refuses every
	// rate limit rule, local ones too): the ratelimit and local_ratelimit filters and the
	// rate limit service's cluster.
	{Added, "HTTPFilter", re(`filters\.http\.(local_)?ratelimit`), "BTP-03", Info},
	{Added, "Cluster", re(`ratelimit_cluster`), "BTP-03", Info},
	// v1.9 trusts the system CA bundle through one shared secret (SDS-03).
	{Added, "Secret", re(`system_ca_certificates`), "SDS-03", Info},
	{Added, "", nil, "", Info},

	// EnvoyPatchPolicy operations: the ID of the rename that made the operation miss when
	// one is found (EPP-05 for the name scheme), otherwise EPP-04.
	{PatchMissed, "", re(`system_ca_certificates`), "SDS-03", Breaking},
	{PatchMissed, "", nil, "EPP-04", Breaking},
	{PatchHits, "", nil, "EPP-04", Info},
	{PatchRetargeted, "", nil, "EPP-04", Breaking},

	// Warnings: the ID the warning names, else unmapped.
	{WarningAdded, "", re(`(?i)lua.*(disabled|off)`), "EEP-02", Warning},
	{WarningAdded, "", nil, "", Info},
}

// idInText finds a behavior ID written in parentheses, as the translator's warnings and
// some messages do: "... (UPG-02)".
var idInText = re(`\(([A-Z]+-[0-9]+)\)`)

// classify returns the ID and severity of a difference. subject is the object kind,
// condition type or entity kind; text is what the rule's Match is tried on; also is more
// text in which a named behavior ID is looked for when the rule leaves the ID open.
func classify(cat *catalog.Catalog, change Change, subjects []string, text string, also ...string) (string, Severity) {
	for _, r := range Rules {
		if r.Change != change || (r.Subject != "" && !contains(subjects, r.Subject)) {
			continue
		}
		if r.Match != nil && !r.Match.MatchString(text) {
			continue
		}
		if r.ID != "" {
			return r.ID, r.Severity
		}
		for _, t := range append([]string{text}, also...) {
			for _, m := range idInText.FindAllStringSubmatch(t, -1) {
				if cat == nil || cat.Get(m[1]) != nil {
					return m[1], r.Severity
				}
			}
		}
		return Unmapped, r.Severity
	}
	return Unmapped, Info
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
