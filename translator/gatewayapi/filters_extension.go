package gatewayapi

import (
	"errors"
	"fmt"
	"sort"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// ExtensionRef filters of HTTPRoute rules: EG's HTTPRouteFilter (direct responses, credential
// injection, extension matches); its urlRewrite is in filters_rewrite.go.

// extensionRef applies an HTTPRouteFilter (gateway.envoyproxy.io) of the route's namespace:
// its URL rewrite, direct response and credential injection, in EG's order (its matches are
// taken by filterMatches).
func (translation *routeTranslator) extensionRef(filters *ruleFilters, in filterInput,
	ref *gwapiv1.LocalObjectReference) *filterErr {
	hrf := translation.objects.httpRouteFilters[types.NamespacedName{Namespace: in.routeNS, Name: string(ref.Name)}]
	if hrf == nil {
		filters.direct = &ir.DirectResponse{Status: 500}
		return &filterErr{typ: errResolvedRefs, reason: "UnsupportedValue",
			msg: fmt.Sprintf("Unable to translate HTTPRouteFilter: %s/%s", in.routeNS, ref.Name)}
	}
	// One rule takes the extra matches of one HTTPRouteFilter: EG refuses a second filter
	// with matches, and the rule with it (EG's testdata: httproute-filter-match-matrix).
	if len(hrf.Spec.Matches) > 0 {
		if filters.matchFilter {
			return acceptedErr("only one HTTPRouteFilter with matches is supported per HTTPRouteRule")
		}
		filters.matchFilter = true
	}
	if e := filters.extensionRewrite(hrf.Spec.URLRewrite); e != nil {
		return e
	}
	if e := translation.filterDirectResponse(filters, in, hrf); e != nil {
		return e
	}
	if ci := hrf.Spec.CredentialInjection; ci != nil {
		cred, err := translation.injectedCredential(hrf.Namespace, ci.Credential.ValueRef)
		if err != nil {
			filters.direct = &ir.DirectResponse{Status: 500}
			return acceptedErr(fmt.Sprintf("invalid filter %s: %v", ref.Kind, err))
		}
		filters.credential = &ir.CredentialInjection{Name: "httproutefilter/" + hrf.Namespace + "/" + hrf.Name,
			Header: ci.Header, Overwrite: ci.Overwrite, Credential: cred}
	}
	return nil
}

// filterDirectResponse applies an HTTPRouteFilter's directResponse.
func (translation *routeTranslator) filterDirectResponse(filters *ruleFilters, in filterInput,
	hrf *egv1a1.HTTPRouteFilter) *filterErr {
	dr := hrf.Spec.DirectResponse
	if dr == nil {
		return nil
	}
	out := &ir.DirectResponse{Status: 200}
	if dr.Body != nil {
		body, err := translation.directResponseBody(dr.Body, in.routeNS)
		if err != nil {
			filters.direct = &ir.DirectResponse{Status: 500}
			return acceptedErr(fmt.Sprintf("invalid filter %s: %v", egv1a1.KindHTTPRouteFilter, err))
		}
		out.Body = body
	}
	if dr.StatusCode != nil {
		out.Status = uint32(*dr.StatusCode)
	}
	if dr.ContentType != nil {
		filters.addResponse = append(filters.addResponse, ir.AddHeader{Name: "Content-Type", Value: *dr.ContentType})
	}
	filters.direct = out
	if h := dr.Header; h != nil {
		for _, a := range h.Add {
			filters.addResponse = append(filters.addResponse, ir.AddHeader{Name: string(a.Name), Value: a.Value, Append: true})
		}
		for _, s := range h.Set {
			filters.addResponse = append(filters.addResponse, ir.AddHeader{Name: string(s.Name), Value: s.Value})
		}
	}
	return nil
}

// injectedCredential reads the "credential" key of the Secret an HTTPRouteFilter's
// credentialInjection names: in the filter's namespace, or another one a ReferenceGrant
// opens to HTTPRouteFilters, with EG's messages.
func (translation *routeTranslator) injectedCredential(ns string, ref gwapiv1.SecretObjectReference) ([]byte, error) {
	if ref.Group != nil && *ref.Group != "" {
		return nil, errors.New("secret ref group must be unspecified/empty")
	}
	kind := "Secret"
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if kind != "Secret" && kind != "ConfigMap" { // EG lets a ConfigMap through to the Secret lookup
		return nil, errors.New("secret ref kind must be Secret")
	}
	target := ns
	if ref.Namespace != nil && *ref.Namespace != "" && string(*ref.Namespace) != ns {
		target = string(*ref.Namespace)
		if !translation.permittedFrom(egv1a1.GroupName, egv1a1.KindHTTPRouteFilter, ns, "", kind, target, string(ref.Name)) {
			return nil, fmt.Errorf("ref to %s %s/%s not permitted by any ReferenceGrant", kind, target, ref.Name)
		}
	}
	s := translation.objects.secrets[types.NamespacedName{Namespace: target, Name: string(ref.Name)}]
	if s == nil {
		return nil, fmt.Errorf("secret %s/%s does not exist", target, ref.Name)
	}
	v := secretData(s, egv1a1.InjectedCredentialKey)
	if len(v) == 0 {
		return nil, fmt.Errorf("credential key %s not found in secret %s/%s", egv1a1.InjectedCredentialKey, s.Namespace,
			s.Name)
	}
	return v, nil
}

// directResponseBody reads an inline body or the ConfigMap a body refers to (its
// "response.body" key, else its only value).
func (translation *routeTranslator) directResponseBody(b *egv1a1.CustomResponseBody, ns string) (string, error) {
	if b.Type != nil && *b.Type == egv1a1.ResponseValueTypeValueRef {
		name := ""
		if b.ValueRef != nil {
			name = string(b.ValueRef.Name)
		}
		cm := translation.objects.configMaps[types.NamespacedName{Namespace: ns, Name: name}]
		if cm == nil {
			return "", fmt.Errorf("can't find the referenced configmap %s/%s", ns, name)
		}
		if v, ok := cm.Data["response.body"]; ok {
			return v, nil
		}
		// EG takes "the first" value of a Go map; with several keys that is not stable, so
		// the reference takes the first key in order.
		if len(cm.Data) > 0 {
			keys := make([]string, 0, len(cm.Data))
			for k := range cm.Data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return cm.Data[keys[0]], nil
		}
		if len(cm.BinaryData) > 0 {
			keys := make([]string, 0, len(cm.BinaryData))
			for k := range cm.BinaryData {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return string(cm.BinaryData[keys[0]]), nil
		}
		return "", fmt.Errorf("can't find the key response.body in the referenced configmap %s/%s", ns, name)
	}
	if b.Inline != nil {
		return *b.Inline, nil
	}
	return "", nil
}

// filterMatches are the extra match sets that HTTPRouteFilters referenced by extensionRef
// add to a rule (today: cookies). Each of the rule's matches is combined with each of them:
// match j with filter match k becomes match j*len(filter matches)+k (RT-15, GR-04).
func (translation *routeTranslator) filterMatches(ns string, refs []*gwapiv1.LocalObjectReference) [][]*ir.StringMatch {
	var out [][]*ir.StringMatch
	for _, ref := range refs {
		if ref == nil || string(ref.Group) != egv1a1.GroupName || string(ref.Kind) != egv1a1.KindHTTPRouteFilter {
			continue
		}
		hrf := translation.objects.httpRouteFilters[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
		if hrf == nil {
			continue
		}
		for _, m := range hrf.Spec.Matches {
			var cookies []*ir.StringMatch
			for _, c := range m.Cookies {
				v := c.Value
				sm := &ir.StringMatch{Name: c.Name}
				if c.Type != nil && *c.Type == egv1a1.CookieMatchRegularExpression {
					sm.SafeRegex = &v
				} else {
					sm.Exact = &v
				}
				cookies = append(cookies, sm)
			}
			out = append(out, cookies)
		}
		if len(hrf.Spec.Matches) > 0 {
			// EG refuses a second filter with matches (extensionRef) and keeps the
			// first one's: egctl v1.9.1 builds the rule's routes from them alone.
			break
		}
	}
	return out
}
