// Package fields is the registry of the CRD fields the reference translator handles, per
// kind, and the walk that finds the fields an object sets that it does not: each becomes a
// warning in `translate` and a note in `upgrade-check`, so that no setting is dropped in
// silence (issue 18: a BackendTrafficPolicy with faultInjection used to be Accepted with no
// filter and no word). TestRegistryCoversCRDs walks the real CRD schemas of the release
// compiled in: every field is classified here, and a field a CRD upgrade adds fails it
// until it is.
package fields

// Kind classifies one kind's fields. Every field path of the kind's CRD schemas is in one
// of the three lists, itself, as an ancestor of an entry, or (for the two gap lists) below
// an entry: a gap entry covers its whole subtree, a handled entry only itself.
type Kind struct {
	// Handled fields are translated as EG v1.9 translates them (each leaf listed, so that
	// a field added below a handled one is not taken for handled).
	Handled []string
	// NotHandled fields are read by EG v1.9 into the xDS or the statuses and not by the
	// reference translator: setting one is a warning, with what EG would do.
	NotHandled []Field
	// NoEffect fields change nothing EG v1.9 translates: it reads them for what a
	// translation does not produce (the proxy's Deployment, Service and command line) or
	// not at all (a description, a kind its controller does not watch). No warning.
	NoEffect []Field
}

// Field is a path (compact form allowed) and what EG v1.9 does with it, worded to follow
// "spec.x is not translated; ".
type Field struct {
	Path   string
	Effect string
}

// Registry is keyed by kind.
//
// Handled lists were written from the code that reads each field (named per kind below);
// the gap lists from EG v1.9.1's internal/gatewayapi and internal/xds/translator, which
// say what EG does with them. TestRegistryCoversCRDs prints a missing field in this
// compact form, ready to be put in one of the lists.
var Registry = merge(envoyGatewayKinds, gatewayAPIKinds)

func merge(parts ...map[string]Kind) map[string]Kind {
	out := map[string]Kind{}
	for _, p := range parts {
		for k, v := range p {
			out[k] = v
		}
	}
	return out
}
