package live

import (
	"encoding/json"
	"fmt"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// StatusFrom reads an object's live status (its JSON form, the whole object or its status)
// into the shape the checks compare: conditions, listeners, and parents (route
// status.parents, policy status.ancestors), defaulted as the API defaults a parentRef
// (result.ParentRef.Defaulted), by the same rule as the corpus reads EG's testdata.
func StatusFrom(ref resource.Ref, object []byte) (result.ObjectStatus, error) {
	var doc struct {
		Status *result.APIStatus `json:"status"`
	}
	if err := json.Unmarshal(object, &doc); err != nil {
		return result.ObjectStatus{}, fmt.Errorf("%s: status: %w", ref, err)
	}
	return doc.Status.ObjectStatus(ref), nil
}
