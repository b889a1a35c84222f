package policy

import (
	"strings"
	"unicode"

	"github.com/egharness/egharness/translator/result"
)

// MarkFeatureErrors writes the features a policy could not build into its status: every
// ancestor it has turns Accepted=False with reason Invalid and EG's message (the error,
// first letter upper-cased, ending in a period). It runs after attachment, on the
// statuses the attachment wrote.
func MarkFeatureErrors(statuses []result.ObjectStatus, errs FeatureErrors) {
	if len(errs) == 0 {
		return
	}
	for i := range statuses {
		st := &statuses[i]
		for ref, err := range errs {
			if st.Object.Kind != ref.Kind || st.Object.Namespace != ref.Namespace || st.Object.Name != ref.Name {
				continue
			}
			msg := featureConditionMessage(err)
			for j := range st.Parents {
				setCondition(&st.Parents[j].Conditions, result.Condition{Type: "Accepted", Status: "False", Reason: "Invalid", Message: msg})
			}
		}
	}
}

func setCondition(cs *[]result.Condition, c result.Condition) {
	for i := range *cs {
		if (*cs)[i].Type == c.Type {
			(*cs)[i] = c
			return
		}
	}
	*cs = append(*cs, c)
}

func featureConditionMessage(err error) string {
	r := []rune(err.Error())
	if len(r) == 0 {
		return ""
	}
	if unicode.IsLetter(r[0]) {
		r[0] = unicode.ToUpper(r[0])
	}
	m := string(r)
	if !strings.HasSuffix(m, ".") {
		m += "."
	}
	return m
}
