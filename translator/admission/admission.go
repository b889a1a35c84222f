// Package admission is the first stage of the reference translator: what the Kubernetes API
// server would refuse on create (schema patterns and CEL rules of the CRDs), with its
// message. A refused object never reaches translation.
package admission

import (
	"fmt"
	"regexp"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// hostnamePattern is Gateway API's Hostname schema pattern. It refuses ports and upper
// case but, as written, lets IPv4 addresses through (RT-02).
const hostnamePattern = `^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`

var hostnameRE = regexp.MustCompile(hostnamePattern)

// Review decides every object; the allowed ones are returned for translation.
func Review(objs []resource.Object, p profile.Profile) ([]result.Admission, []resource.Object) {
	verdicts := make([]result.Admission, 0, len(objs))
	admitted := make([]resource.Object, 0, len(objs))
	for _, o := range objs {
		problems := check(o)
		v := result.Admission{Object: o.Ref(), Allowed: len(problems) == 0}
		if !v.Allowed {
			v.Message = invalidMessage(o, problems)
		} else {
			admitted = append(admitted, o)
		}
		verdicts = append(verdicts, v)
	}
	return verdicts, admitted
}

type problem struct{ path, value, detail string }

func check(o resource.Object) []problem {
	var out []problem
	hostname := func(path, h string) {
		if !hostnameRE.MatchString(h) {
			out = append(out, problem{path: path, value: h, detail: fmt.Sprintf("%s in body should match '%s'", path, hostnamePattern)})
		}
	}
	switch v := o.Obj.(type) {
	case *gwapiv1.HTTPRoute:
		for i, h := range v.Spec.Hostnames {
			hostname(fmt.Sprintf("spec.hostnames[%d]", i), string(h))
		}
	case *gwapiv1.Gateway:
		for i, l := range v.Spec.Listeners {
			if l.Hostname != nil {
				hostname(fmt.Sprintf("spec.listeners[%d].hostname", i), string(*l.Hostname))
			}
		}
	}
	return out
}

// invalidMessage writes the refusal the way the API server words it.
func invalidMessage(o resource.Object, ps []problem) string {
	group := ""
	if i := strings.Index(o.APIVersion, "/"); i > 0 {
		group = "." + o.APIVersion[:i]
	}
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s: Invalid value: %q: %s", p.path, p.value, p.detail))
	}
	body := parts[0]
	if len(parts) > 1 {
		body = "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%s%s %q is invalid: %s", o.Kind, group, o.Obj.GetName(), body)
}
