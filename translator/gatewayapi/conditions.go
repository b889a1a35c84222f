package gatewayapi

import (
	"sort"
	"strings"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/result"
)

// The controller name EG's GatewayClasses carry; Gateways of other classes are ignored.
const ControllerName = "gateway.envoyproxy.io/gatewayclass-controller"

// EG's condition messages (facts from EG v1.9).
const (
	msgGatewayClassAccepted = "Valid GatewayClass"
	msgListenerProgrammed   = "Sending translated listener configuration to the data plane"
	msgListenerAccepted     = "Listener has been successfully translated"
	msgListenerResolvedRefs = "Listener references have been resolved"
	msgListenerInvalid      = "Listener is invalid, see other Conditions for details."
	msgRouteAccepted        = "Route is accepted"
	msgRouteResolvedRefs    = "Resolved all the Object references for the Route"
	msgNoMatchingParent     = "No listeners match this parent ref"
	msgNotAllowed           = "No listeners included by this parent ref allowed this attachment."
	msgNoHostnameFormat     = "There were no hostname intersections between the %s and this parent ref's Listener(s)."
	msgOverlapPrefix        = "Overlapping match conditions with route(s): "
)

// refErrors gathers a route's reference problems for one condition: one problem keeps its
// reason; several are listed one per line and their distinct reasons joined by commas.
type refErrors struct {
	msgs    []string
	reasons []string
}

func (e *refErrors) add(reason, msg string) {
	e.msgs = append(e.msgs, msg)
	e.reasons = append(e.reasons, reason)
}

func (e *refErrors) empty() bool { return len(e.msgs) == 0 }

func (e *refErrors) condition(typ string) result.Condition {
	if len(e.msgs) == 1 {
		return conditions.New(typ, "False", e.reasons[0], conditions.Message(e.msgs[0]))
	}
	return e.joined(typ)
}

// rawCondition is how EG words layer-4 route problems: a single problem as written
// (lower case, no period), several as condition() does.
func (e *refErrors) rawCondition(typ string) result.Condition {
	if len(e.msgs) == 1 {
		return conditions.New(typ, "False", e.reasons[0], e.msgs[0])
	}
	return e.joined(typ)
}

func (e *refErrors) joined(typ string) result.Condition {
	lines := make([]string, len(e.msgs))
	for i, m := range e.msgs {
		lines[i] = conditions.Message(m)
	}
	set := map[string]bool{}
	var reasons []string
	for _, r := range e.reasons {
		if !set[r] {
			set[r] = true
			reasons = append(reasons, r)
		}
	}
	sort.Strings(reasons)
	return conditions.New(typ, "False", strings.Join(reasons, ","), strings.Join(lines, "\n"))
}
