package policy

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// A SecurityPolicy's authorization (EG v1.9), resolved into ir.Authorization: the rule
// names EG gives, the actions, and each condition typed, for the HTTP RBAC filter and the
// network one alike.

// ResolveAuthorization is the authorization of the SecurityPolicy in force (its effective
// spec), nil without one.
func ResolveAuthorization(a *ir.Applied[egv1a1.SecurityPolicySpec]) *ir.Authorization {
	if a == nil || a.Spec == nil || a.Spec.Authorization == nil {
		return nil
	}
	auth := a.Spec.Authorization
	owner := a.OwnerOf("authorization")
	out := &ir.Authorization{DefaultAllow: auth.DefaultAction != nil &&
		*auth.DefaultAction == egv1a1.AuthorizationActionAllow}
	for i, rule := range auth.Rules {
		name := fmt.Sprintf("securitypolicy/%s/%s/authorization/rule/%d", owner.Namespace, owner.Name, i)
		if rule.Name != nil && *rule.Name != "" {
			name = *rule.Name
		}
		out.Rules = append(out.Rules, authorizationRule(name, rule))
	}
	return out
}

func authorizationRule(name string, rule egv1a1.AuthorizationRule) ir.AuthorizationRule {
	out := ir.AuthorizationRule{Name: name, Deny: rule.Action == egv1a1.AuthorizationActionDeny}
	if op := rule.Operation; op != nil {
		for _, m := range op.Methods {
			out.Methods = append(out.Methods, string(m))
		}
		if p := op.Path; p != nil {
			typ := gwapiv1.PathMatchPathPrefix
			if p.Type != nil {
				typ = *p.Type
			}
			out.Path = &ir.AuthorizationPath{Type: string(typ), Value: p.Value, Invert: p.Invert != nil && *p.Invert}
		}
	}
	if rule.CEL != nil {
		cel := string(*rule.CEL)
		out.CEL = &cel
	}
	p := rule.Principal
	if p == nil {
		return out
	}
	for _, c := range p.ClientCIDRs {
		out.ClientCIDRs = append(out.ClientCIDRs, string(c))
	}
	for _, g := range p.ClientIPGeoLocations {
		loc := ir.GeoLocation{Country: g.Country, Region: g.Region, City: g.City, ASN: g.ASN, ISP: g.ISP}
		if an := g.Anonymous; an != nil {
			loc.IsAnonymous, loc.IsVPN, loc.IsHosting, loc.IsTor, loc.IsProxy = an.IsAnonymous, an.IsVPN, an.IsHosting, an.IsTor,
				an.IsProxy
		}
		out.GeoLocations = append(out.GeoLocations, loc)
	}
	if j := p.JWT; j != nil {
		jwt := &ir.AuthorizationJWT{Provider: j.Provider}
		for _, s := range j.Scopes {
			jwt.Scopes = append(jwt.Scopes, string(s))
		}
		for _, c := range j.Claims {
			jwt.Claims = append(jwt.Claims, ir.JWTClaim{Name: c.Name, Values: c.Values,
				StringArray: c.ValueType != nil && *c.ValueType == egv1a1.JWTClaimValueTypeStringArray})
		}
		out.JWT = jwt
	}
	for _, h := range p.Headers {
		out.Headers = append(out.Headers, ir.AuthorizationHeader{Name: h.Name, Values: h.Values})
	}
	return out
}
