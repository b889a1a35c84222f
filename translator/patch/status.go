package patch

import (
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/result"
)

// Programmed condition messages, as EG v1.9 writes them.
const (
	msgProgrammed = "Patches have been successfully applied."
	msgNotFound   = "Unable to find xds resources: "
)

// programmed adds EG's Programmed condition to an accepted policy's ancestor: True when
// every operation applied; False with reason Invalid and the errors, one per line, when
// some failed; False with reason ResourceNotFound naming type/name of each missing resource
// when some resource was not found (that one wins when both happen, as in EG, which sets
// it last). A policy whose resources are all missing still shows Accepted=True: the
// harness's records are where the misses are plain (EPP-04).
func programmed(conds []result.Condition, errs, notFound []string) []result.Condition {
	c := result.Condition{Type: string(egv1a1.PolicyConditionProgrammed), Status: "True",
		Reason: string(egv1a1.PolicyReasonProgrammed), Message: msgProgrammed}
	switch {
	case len(notFound) > 0:
		c.Status, c.Reason = "False", string(egv1a1.PolicyReasonResourceNotFound)
		c.Message = conditions.Truncate(msgNotFound + strings.Join(notFound, ","))
	case len(errs) > 0:
		c.Status, c.Reason = "False", string(egv1a1.PolicyReasonInvalid)
		c.Message = conditions.Truncate(conditions.Message(strings.Join(errs, "\n")))
	}
	return append(conds, c)
}
