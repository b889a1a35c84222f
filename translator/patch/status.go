package patch

import (
	"strings"
	"unicode"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

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
		c.Message = truncate(msgNotFound + strings.Join(notFound, ","))
	case len(errs) > 0:
		c.Status, c.Reason = "False", string(egv1a1.PolicyReasonInvalid)
		c.Message = truncate(sentence(strings.Join(errs, "\n")))
	}
	return append(conds, c)
}

// sentence is how EG turns an error into a condition message: first letter upper case, a
// final period.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	r := []rune(msg)
	if unicode.IsLetter(r[0]) {
		r[0] = unicode.ToUpper(r[0])
	}
	if r[len(r)-1] != '.' {
		r = append(r, '.')
	}
	return string(r)
}

// EG cuts condition messages at the API's limit and says so.
const (
	maxMessage      = 32768
	truncatedSuffix = " (message truncated)."
)

func truncate(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	return msg[:maxMessage-len(truncatedSuffix)] + truncatedSuffix
}
