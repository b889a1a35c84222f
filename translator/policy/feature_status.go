package policy

import (
	"github.com/egharness/egharness/translator/conditions"
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
		status := &statuses[i]
		for ref, err := range errs {
			if status.Object.Kind != ref.Kind || status.Object.Namespace != ref.Namespace || status.Object.Name != ref.Name {
				continue
			}
			msg := conditions.ErrorMessage(err)
			for j := range status.Parents {
				status.Parents[j].Conditions = conditions.Set(status.Parents[j].Conditions,
					conditions.New("Accepted", "False", "Invalid", msg))
			}
		}
	}
}
