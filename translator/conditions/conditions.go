// Package conditions is the one place the reference translator builds and edits status
// conditions, for every stage (gatewayapi, policy, patch): EG v1.9 words and merges them
// the same way everywhere (internal/gatewayapi/status/conditions.go).
package conditions

import (
	"unicode"

	"github.com/egharness/egharness/translator/result"
)

// New is a condition of type typ.
func New(typ, status, reason, msg string) result.Condition {
	return result.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
}

// Set replaces the condition of c's type in list, in place, or appends c: conditions keep
// the order their types were first set in.
func Set(list []result.Condition, c result.Condition) []result.Condition {
	for i := range list {
		if list[i].Type == c.Type {
			list[i] = c
			return list
		}
	}
	return append(list, c)
}

// Has reports whether list has a condition of type typ.
func Has(list []result.Condition, typ string) bool {
	for _, c := range list {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// Remove returns list without its condition of type typ (a new slice when there was one,
// so the caller's list is left as it was).
func Remove(list []result.Condition, typ string) []result.Condition {
	for j := range list {
		if list[j].Type == typ {
			return append(list[:j:j], list[j+1:]...)
		}
	}
	return list
}

// IsTrue reports whether list's condition of type typ has status True (false when there
// is none).
func IsTrue(list []result.Condition, typ string) bool {
	for _, c := range list {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

// Message words an error the way EG puts it in a condition (status.Error2ConditionMsg):
// the first rune upper case when it is a letter, a final period when there is none. The
// empty message stays empty.
func Message(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	if unicode.IsLetter(r[0]) {
		r[0] = unicode.ToUpper(r[0])
	}
	if r[len(r)-1] != '.' {
		r = append(r, '.')
	}
	return string(r)
}

// ErrorMessage is Message of err's text.
func ErrorMessage(err error) string { return Message(err.Error()) }

// EG cuts condition messages at the API's limit and says so.
const (
	MaxMessage      = 32768
	truncatedSuffix = " (message truncated)."
)

// Truncate cuts msg to the API's limit on a condition message, ending it with EG's note.
func Truncate(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	return msg[:MaxMessage-len(truncatedSuffix)] + truncatedSuffix
}
