package admission

import (
	"fmt"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// The EnvoyPatchPolicy CRD's enums: the patch type, the xDS types a patch may name and the
// RFC 6902 operations.
var (
	patchTypes    = []string{string(egv1a1.JSONPatchEnvoyPatchType)}
	patchResTypes = []string{
		string(egv1a1.ListenerEnvoyResourceType), string(egv1a1.RouteConfigurationEnvoyResourceType),
		string(egv1a1.ClusterEnvoyResourceType), string(egv1a1.ClusterLoadAssignmentEnvoyResourceType),
		string(egv1a1.SecretEnvoyResourceType),
	}
	patchOps = []string{"add", "remove", "replace", "move", "copy", "test"}
)

// envoyPatchPolicyProblems are the values the CRD's enums refuse, in the order the API
// server walks the object (each jsonPatches item's operation, then its type; spec.type last).
func envoyPatchPolicyProblems(p *egv1a1.EnvoyPatchPolicy) []problem {
	var out []problem
	for i, jp := range p.Spec.JSONPatches {
		out = append(out, enum(fmt.Sprintf("spec.jsonPatches[%d].operation.op", i), string(jp.Operation.Op), patchOps)...)
		out = append(out, enum(fmt.Sprintf("spec.jsonPatches[%d].type", i), string(jp.Type), patchResTypes)...)
	}
	return append(out, enum("spec.type", string(p.Spec.Type), patchTypes)...)
}

// enum is the API server's refusal of a value outside a schema enum.
func enum(path, value string, allowed []string) []problem {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return []problem{{path: path, tooMany: fmt.Sprintf("%s: Unsupported value: %q: supported values: %s", path, value, strings.Join(quoted, ", "))}}
}
