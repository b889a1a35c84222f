package policy

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// A BackendTrafficPolicy's responseOverride (EG v1.9): its ConfigMap bodies, read while
// the features resolve, and its rules, resolved into ir.ResponseOverride. A rule without
// match criteria is kept: the xDS stage reports it for the route, as EG does.

// responseBodies reads the ConfigMap bodies of a BackendTrafficPolicy's responseOverride
// rules, in the namespace of the policy that declared responseOverride (after a merge,
// possibly the parent), as EG v1.9 does: the response.body key, else the first key.
func responseBodies(a *ir.Applied[egv1a1.BackendTrafficPolicySpec], objs *RefObjects) (map[int]string, error) {
	var out map[int]string
	ns := a.NamespaceOf("responseOverride")
	for i, ro := range a.Spec.ResponseOverride {
		if ro == nil || ro.Response == nil || ro.Response.Body == nil {
			continue
		}
		b := ro.Response.Body
		if b.Type == nil || *b.Type != egv1a1.ResponseValueTypeValueRef || b.ValueRef == nil {
			continue
		}
		v, cmFound, keyFound := objs.configMapValue(ns, string(b.ValueRef.Name), "response.body")
		switch {
		case !cmFound:
			return nil, fmt.Errorf("ResponseOverride: can't find the referenced configmap %s/%s", ns, b.ValueRef.Name)
		case !keyFound:
			return nil, fmt.Errorf("ResponseOverride: can't find the key response.body in the referenced configmap %s/%s", ns,
				b.ValueRef.Name)
		}
		if out == nil {
			out = map[int]string{}
		}
		out[i] = v
	}
	return out, nil
}

// resolveResponseOverride is the policy's rules (nil without any); bodies are the ones
// read from ConfigMaps, by rule index.
func resolveResponseOverride(a *ir.Applied[egv1a1.BackendTrafficPolicySpec],
	bodies map[int]string) *ir.ResponseOverride {
	if len(a.Spec.ResponseOverride) == 0 {
		return nil
	}
	out := &ir.ResponseOverride{Config: fmt.Sprintf("backendtrafficpolicy/%s/%s", a.Policy.Namespace, a.Policy.Name)}
	for i, ro := range a.Spec.ResponseOverride {
		if ro == nil {
			continue
		}
		rule := ir.ResponseOverrideRule{Index: i}
		for _, c := range ro.Match.StatusCodes {
			rule.StatusCodes = append(rule.StatusCodes, statusCodeMatch(c))
		}
		for _, h := range ro.Match.ResponseHeaders {
			rule.ResponseHeaders = append(rule.ResponseHeaders, stringMatch(string(h.Name), h.Value))
		}
		if src := ro.Source; src != nil &&
			(*src == egv1a1.ResponseOverrideSourceLocal || *src == egv1a1.ResponseOverrideSourceBackend) {
			local := *src == egv1a1.ResponseOverrideSourceLocal
			rule.LocalReply = &local
		}
		if rd := ro.Redirect; rd != nil {
			rule.Redirect = responseRedirect(rd)
		} else if ro.Response != nil {
			rule.Response = overrideResponse(ro.Response, bodies[i])
		}
		out.Rules = append(out.Rules, rule)
	}
	return out
}

// statusCodeMatch is one code (0 when the policy gives none) or, for type Range, a range.
func statusCodeMatch(c egv1a1.StatusCodeMatch) ir.StatusCodeMatch {
	if c.Type != nil && *c.Type == egv1a1.StatusCodeValueTypeRange && c.Range != nil {
		return ir.StatusCodeMatch{Range: &ir.StatusCodeRange{Start: c.Range.Start, End: c.Range.End}}
	}
	var out ir.StatusCodeMatch
	if c.Value != nil {
		out.Value = *c.Value
	}
	return out
}

// stringMatch is EG's StringMatch (on the named header, where name is not "") in IR
// form: exact unless its type says otherwise (a type EG does not know matches exactly too).
func stringMatch(name string, m egv1a1.StringMatch) ir.StringMatch {
	out := ir.StringMatch{Name: name}
	v := m.Value
	t := egv1a1.StringMatchExact
	if m.Type != nil {
		t = *m.Type
	}
	switch t {
	case egv1a1.StringMatchPrefix:
		out.Prefix = &v
	case egv1a1.StringMatchSuffix:
		out.Suffix = &v
	case egv1a1.StringMatchRegularExpression:
		out.SafeRegex = &v
	default:
		out.Exact = &v
	}
	return out
}

func responseRedirect(rd *egv1a1.CustomRedirect) *ir.ResponseRedirect {
	out := &ir.ResponseRedirect{Scheme: rd.Scheme, StatusCode: 302}
	if rd.Hostname != nil {
		out.Hostname = string(*rd.Hostname)
	}
	if rd.Port != nil {
		out.Port = uint32(*rd.Port)
	}
	if rd.Path != nil && rd.Path.ReplaceFullPath != nil {
		// EG v1.9 writes a full path replacement only (a prefix replacement is dropped)
		out.Path = rd.Path.ReplaceFullPath
	}
	if rd.StatusCode != nil {
		out.StatusCode = uint32(*rd.StatusCode)
	}
	return out
}

// overrideResponse is a local answer; fromConfigMap is the body read for a ValueRef body.
// EG adds the content type first, then the headers to add, then those to set, and reads
// no header to remove.
func overrideResponse(resp *egv1a1.CustomResponse, fromConfigMap string) *ir.OverrideResponse {
	out := &ir.OverrideResponse{}
	if b := resp.Body; b != nil {
		switch {
		case b.Type != nil && *b.Type == egv1a1.ResponseValueTypeValueRef:
			out.Body = fromConfigMap
		case b.Inline != nil:
			out.Body = *b.Inline
		}
	}
	if resp.ContentType != nil {
		out.ContentType = *resp.ContentType
	}
	if resp.StatusCode != nil {
		code := uint32(*resp.StatusCode)
		out.StatusCode = &code
	}
	if h := resp.Header; h != nil {
		for _, x := range h.Add {
			out.Headers = append(out.Headers, ir.OverrideHeader{Name: string(x.Name), Value: x.Value})
		}
		for _, x := range h.Set {
			out.Headers = append(out.Headers, ir.OverrideHeader{Name: string(x.Name), Value: x.Value, Overwrite: true})
		}
	}
	return out
}
