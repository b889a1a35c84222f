package policy

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"github.com/google/cel-go/cel"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// Keys EG reads in referenced ConfigMaps and Secrets.
const (
	jwksConfigMapKey = "jwks"
	luaConfigMapKey  = "lua"
)

// errLuaDisabled is EG's reason for refusing Lua while the feature is off (EEP-02).
var errLuaDisabled = errors.New("Skipping Lua EnvoyExtensionPolicy as feature is disabled in the Gateway")

// FeatureErrors are the policies whose features could not be built, by policy, with the
// error EG reports in their Accepted=False (reason Invalid) ancestor condition.
type FeatureErrors map[ir.PolicyRef]error

// ResolveFeatures reads, for every SecurityPolicy and EnvoyExtensionPolicy in force on an
// HTTP route, what its features need from Secrets and ConfigMaps (in the namespace each
// field came from, MRG-05) into the route's PolicyData. A policy whose features cannot be
// built (a missing Secret, Lua while Lua is off...) leaves the routes it is in force on
// failing closed with a direct 500, as EG does, and is returned for its status.
func ResolveFeatures(x *ir.XDS, objs *RefObjects, luaOn bool) FeatureErrors {
	errs := FeatureErrors{}
	secDone := map[*ir.Applied[egv1a1.SecurityPolicySpec]]*resolved{}
	// extension policies resolve per listener: dynamic modules depend on its EnvoyProxy
	type extKey struct {
		a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec]
		l *ir.HTTPListener
	}
	extDone := map[extKey]*resolved{}
	// geolocation rules validate once per policy and listener (S0-54); EG joins the error
	// of each listener to the policy's
	type geoKey struct {
		a *ir.Applied[egv1a1.SecurityPolicySpec]
		l *ir.HTTPListener
	}
	geoDone, geoFail := map[geoKey]bool{}, map[geoKey]bool{}
	// a policy's features without the ones that failed, once per policy
	stripped := map[*ir.Applied[egv1a1.SecurityPolicySpec]]*ir.Applied[egv1a1.SecurityPolicySpec]{}
	geoErrs := map[ir.PolicyRef]error{}
	for _, l := range x.HTTP {
		for _, r := range l.Routes {
			var data ir.PolicyData
			extFailed, btpFailed, geoDirect500 := false, false, false
			if a := r.Policies.Security; a != nil && a.Spec != nil {
				res := secDone[a]
				if res == nil {
					res = resolveSecurity(a, objs)
					secDone[a] = res
				}
				geoFailed := false
				if usesGeoIP(a.Spec.Authorization) {
					requireGeoFields(l, a.Spec.Authorization)
					if k := (geoKey{a, l}); !geoDone[k] {
						geoDone[k] = true
						mm, err := validateGeoIP(a.Spec.Authorization, l)
						if err != nil {
							geoErrs[a.Policy] = errors.Join(geoErrs[a.Policy], fmt.Errorf("Authorization: %w", err))
							geoFail[k] = true
						} else if l.GeoIP.MaxMind == nil {
							l.GeoIP.MaxMind = maxMindDatabases(mm)
						}
					}
					geoFailed = geoFail[geoKey{a, l}]
				}
				switch {
				case geoErrs[a.Policy] != nil:
					errs[a.Policy] = errors.Join(res.err, geoErrs[a.Policy])
				case res.err != nil:
					errs[a.Policy] = res.err
				}
				// A geolocation rule that does not validate on this listener makes the
				// route answer 500, and EG keeps the policy's features on it (the RBAC
				// rules included, which run before the direct response). So does a feature
				// that cannot be built (a missing Secret...): EG builds each feature on its
				// own and keeps the ones that built on the route, which answers 500 unless
				// only a fail-open extAuth failed (then it runs without it).
				geoDirect500 = geoFailed
				if res.err != nil {
					if !res.failOpenOnly(a.Spec) {
						geoDirect500 = true
					}
					if a = withoutFailed(a, res.failed, stripped); a == nil {
						r.Policies.Security = nil
					} else {
						r.Policies.Security = a
					}
				}
				data.LocalJWKS, data.RemoteJWKS = res.data.LocalJWKS, res.data.RemoteJWKS
				data.BasicAuthUsers = res.data.BasicAuthUsers
				data.APIKeys = res.data.APIKeys
				data.ExtAuth = res.data.ExtAuth
				data.OIDC, data.OIDCClientSecret = res.data.OIDC, res.data.OIDCClientSecret
			}
			if a := r.Policies.Extension; a != nil && a.Spec != nil {
				res := extDone[extKey{a, l}]
				if res == nil {
					res = resolveExtension(a, objs, luaOn, l)
					extDone[extKey{a, l}] = res
				}
				switch {
				case res.err != nil && !res.failOpen:
					errs[a.Policy] = res.err
					extFailed = true
				case res.err != nil:
					// Only fail-open services failed: the policy is Invalid, the route
					// runs with the extensions that could be built.
					errs[a.Policy] = res.err
					fallthrough
				default:
					data.Lua = res.data.Lua
					data.ExtProc = res.data.ExtProc
					data.DynamicModules = res.data.DynamicModules
				}
			}
			if a := r.Policies.BackendTraffic; a != nil && a.Spec != nil && len(a.Spec.ResponseOverride) > 0 {
				bodies, err := responseBodies(a, objs)
				if err != nil {
					errs[a.Policy] = err
					btpFailed = true
				} else {
					data.ResponseBodies = bodies
				}
			}
			// A policy that cannot be enforced makes the route answer 500 rather than forward
			// unextended traffic, and only that policy's features leave the route: EG sets
			// the direct response where it applies the failing policy and applies the other
			// kinds as usual (a SecurityPolicy's filters stay configured on the route).
			if extFailed {
				r.Policies.Extension = nil
			}
			if btpFailed {
				r.Policies.BackendTraffic = nil
			}
			if extFailed || btpFailed || geoDirect500 {
				r.DirectResponse = &ir.DirectResponse{Status: 500}
			}
			if data.LocalJWKS != nil || data.RemoteJWKS != nil || data.BasicAuthUsers != nil || data.APIKeys != nil ||
				data.Lua != nil ||
				data.ExtAuth != nil || data.ExtProc != nil || data.OIDC != nil || data.DynamicModules != nil ||
				data.ResponseBodies != nil {
				d := data
				r.PolicyData = &d
			}
		}
	}
	for _, l := range x.TCP {
		for _, r := range l.Routes {
			a := r.Policies.Security
			if a == nil || a.Spec == nil {
				continue
			}
			// EG holds a policy to the TCP rule when it targets a TCPRoute; a Gateway policy
			// gives the Gateway's TCP routes its authorization and nothing else (EG's
			// testdata: tcproute-securitypolicy-with-authorization-client-cidr).
			if !objs.tcpRouteTargets[nsName{a.Policy.Namespace, a.Policy.Name}] {
				continue
			}
			if err := CheckTCPSecurity(a.Spec); err != nil {
				// EG drops the policy from the route: the connection is not authorized
				// at all, as if no policy were there.
				errs[a.Policy] = err
				r.Policies.Security = nil
			}
		}
	}
	resolveSecurityFeatures(x)
	resolveBackendTrafficFilters(x)
	resolveBackendTrafficSettings(x)
	resolveExtensionSettings(x)
	resolveDNS(x)
	return errs
}

type resolved struct {
	data ir.PolicyData
	err  error
	// failed are the SecurityPolicy features that could not be built, by their JSON names
	// (jwt, oidc, basicAuth, apiKeyAuth, authorization, extAuth).
	failed map[string]bool
	// failOpen: every feature that failed may fail open (extProc with failOpen), so the
	// routes keep running without it.
	failOpen bool
}

// failOpenOnly says whether the only security feature that failed is an extAuth that
// fails open: EG then lets requests through without it instead of answering 500.
func (r *resolved) failOpenOnly(spec *egv1a1.SecurityPolicySpec) bool {
	return len(r.failed) == 1 && r.failed["extAuth"] && spec.ExtAuth != nil && spec.ExtAuth.FailOpen != nil &&
		*spec.ExtAuth.FailOpen
}

// withoutFailed is a's spec without the features that failed (EG keeps the others on the
// routes), or nil when none is left; memo keeps one copy per policy.
func withoutFailed(a *ir.Applied[egv1a1.SecurityPolicySpec], failed map[string]bool,
	memo map[*ir.Applied[egv1a1.SecurityPolicySpec]]*ir.Applied[egv1a1.SecurityPolicySpec],
) *ir.Applied[egv1a1.SecurityPolicySpec] {
	if c, ok := memo[a]; ok {
		return c
	}
	spec := *a.Spec
	for f := range failed {
		switch f {
		case "jwt":
			spec.JWT = nil
		case "oidc":
			spec.OIDC = nil
		case "basicAuth":
			spec.BasicAuth = nil
		case "apiKeyAuth":
			spec.APIKeyAuth = nil
		case "authorization":
			spec.Authorization = nil
		case "extAuth":
			spec.ExtAuth = nil
		}
	}
	var c *ir.Applied[egv1a1.SecurityPolicySpec]
	if spec.JWT != nil || spec.OIDC != nil || spec.BasicAuth != nil || spec.APIKeyAuth != nil ||
		spec.Authorization != nil ||
		spec.ExtAuth != nil || spec.CORS != nil || spec.CSRF != nil {
		cp := *a
		cp.Spec = &spec
		c = &cp
	}
	memo[a] = c
	return c
}

func resolveSecurity(a *ir.Applied[egv1a1.SecurityPolicySpec], objs *RefObjects) *resolved {
	res := &resolved{failed: map[string]bool{}}
	spec := a.Spec
	var errs []error
	// fail records why a feature (spec field field, JSON name feature) could not be built.
	fail := func(field, feature string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
			res.failed[feature] = true
		}
	}
	if spec.JWT != nil {
		fail("JWT", "jwt", resolveLocalJWKS(a, objs, &res.data))
	}
	if spec.Authorization != nil {
		fail("Authorization", "authorization", checkAuthorization(spec.Authorization))
	}
	if spec.BasicAuth != nil {
		users, err := basicAuthUsers(a, objs)
		fail("BasicAuth", "basicAuth", err)
		res.data.BasicAuthUsers = users
	}
	if spec.APIKeyAuth != nil {
		keys, err := apiKeys(a, objs)
		fail("APIKeyAuth", "apiKeyAuth", err)
		res.data.APIKeys = keys
	}
	if spec.OIDC != nil {
		d, secret, err := resolveOIDC(a, objs)
		fail("OIDC", "oidc", err)
		res.data.OIDC, res.data.OIDCClientSecret = d, secret
	}
	if spec.ExtAuth != nil {
		svc, err := resolveExtAuth(a, objs)
		fail("ExtAuth", "extAuth", err)
		res.data.ExtAuth = svc
	}
	res.err = errors.Join(errs...)
	return res
}

// resolveLocalJWKS reads, provider after provider, each local JWKS a ConfigMap holds, and
// resolves the backendRefs of each remote JWKS that names some (for EG's checks of them and
// the BackendTLSPolicy ancestor they give the policy; the xDS still reaches the JWKS by
// its URI).
func resolveLocalJWKS(a *ir.Applied[egv1a1.SecurityPolicySpec], objs *RefObjects, data *ir.PolicyData) error {
	ns := a.NamespaceOf("jwt")
	for i, p := range a.Spec.JWT.Providers {
		if r := p.RemoteJWKS; r != nil && len(r.BackendRefs) > 0 {
			if objs.backends == nil {
				return errors.New("backend references cannot be resolved")
			}
			owner := a.OwnerOfPath("jwt.providers")
			dest, err := objs.backends.ResolvePolicyBackends(owner, r.BackendRefs, extServiceName(owner, "jwt", i), false)
			if err != nil {
				return err
			}
			if data.RemoteJWKS == nil {
				data.RemoteJWKS = map[string]*ir.ExtService{}
			}
			data.RemoteJWKS[p.Name] = &ir.ExtService{Destination: dest, Owner: owner}
			continue
		}
		l := p.LocalJWKS
		if l == nil || l.Type == nil || *l.Type != egv1a1.LocalJWKSTypeValueRef || l.ValueRef == nil {
			continue
		}
		v, found, ok := objs.configMapValue(ns, string(l.ValueRef.Name), jwksConfigMapKey)
		switch {
		case !found:
			return fmt.Errorf("local JWKS ConfigMap %s/%s not found", ns, l.ValueRef.Name)
		case !ok:
			return fmt.Errorf("JWKS data not found in ConfigMap %s/%s, no %q key and no other data found", ns, l.ValueRef.Name,
				jwksConfigMapKey)
		}
		if data.LocalJWKS == nil {
			data.LocalJWKS = map[string]string{}
		}
		data.LocalJWKS[p.Name] = v
	}
	return nil
}

var celEnv, _ = cel.NewEnv()

// checkAuthorization refuses rules EG cannot translate: a client CIDR that does not parse,
// a CEL expression that does not parse, a path regex that does not compile.
func checkAuthorization(a *egv1a1.Authorization) error {
	for _, r := range a.Rules {
		if r.Principal != nil {
			for _, c := range r.Principal.ClientCIDRs {
				if _, _, err := net.ParseCIDR(string(c)); err != nil {
					return fmt.Errorf("unable to translate authorization rule: %w", err)
				}
			}
		}
		if op := r.Operation; op != nil && op.Path != nil && op.Path.Type != nil &&
			*op.Path.Type == gwapiv1.PathMatchRegularExpression {
			if _, err := regexp.Compile(op.Path.Value); err != nil {
				return fmt.Errorf("unable to translate authorization rule: %w", err)
			}
		}
		if r.CEL != nil {
			if _, iss := celEnv.Parse(string(*r.CEL)); iss != nil && iss.Err() != nil {
				return fmt.Errorf("invalid CEL expression: %s", *r.CEL)
			}
		}
	}
	return nil
}

// basicAuthUsers reads the htpasswd of the users Secret: CRLF line ends become LF, and
// every entry must be {SHA} (unsalted SHA-1, the only hash Envoy's basic_auth takes).
func basicAuthUsers(a *ir.Applied[egv1a1.SecurityPolicySpec], objs *RefObjects) ([]byte, error) {
	s, err := objs.secretRef("SecurityPolicy", a.NamespaceOf("basicAuth"), a.Spec.BasicAuth.Users)
	if err != nil {
		return nil, err
	}
	users := s.Data[egv1a1.BasicAuthUsersSecretKey]
	if len(users) == 0 {
		return nil, fmt.Errorf("secret %s/%s must contain a non-empty %q key", s.Namespace, s.Name,
			egv1a1.BasicAuthUsersSecretKey)
	}
	users = bytes.ReplaceAll(users, []byte("\r\n"), []byte("\n"))
	for _, line := range strings.Split(string(users), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		_, pw, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("invalid htpasswd format: each line must be in the format 'username:password'")
		}
		if !strings.HasPrefix(pw, "{SHA}") {
			return nil, fmt.Errorf("unsupported htpasswd format: please use {SHA}")
		}
		sum, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(pw, "{SHA}"))
		if err != nil {
			return nil, fmt.Errorf("invalid htpasswd format: {SHA} must be base64-encoded SHA1")
		}
		if len(sum) != sha1.Size {
			return nil, fmt.Errorf("invalid htpasswd format: {SHA} must be SHA1 (%d bytes)", sha1.Size)
		}
	}
	return users, nil
}

// apiKeys reads the credential Secrets in order: each Secret's clients by name, a client
// already seen keeps its first key, and one key for two clients is an error.
func apiKeys(a *ir.Applied[egv1a1.SecurityPolicySpec], objs *RefObjects) ([]ir.APIKey, error) {
	ns := a.NamespaceOf("apiKeyAuth")
	var out []ir.APIKey
	clients, keys := map[string]bool{}, map[string]bool{}
	for _, ref := range a.Spec.APIKeyAuth.CredentialRefs {
		s, err := objs.secretRef("SecurityPolicy", ns, ref)
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(s.Data))
		for id := range s.Data {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if clients[id] {
				continue
			}
			k := string(s.Data[id])
			if keys[k] {
				return nil, errors.New("duplicated API key")
			}
			clients[id], keys[k] = true, true
			out = append(out, ir.APIKey{Client: id, Key: k})
		}
	}
	return out, nil
}

// resolveExtension resolves an EnvoyExtensionPolicy's features in EG's order for a route
// target: Wasm, Lua (gated by enableLua, EEP-02), ext_proc, dynamic modules (from the
// listener's EnvoyProxy allowlist). Wasm, ext_proc and dynamic modules are not gated by
// enableLua (EEP-04). A failing Lua, Wasm or dynamic module fails the routes closed;
// failing ext_proc services do only when one of them is not failOpen.
func resolveExtension(a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec], objs *RefObjects, luaOn bool,
	l *ir.HTTPListener) *resolved {
	allowlist := l.DynamicModules
	res := &resolved{}
	var errs []error
	closed := false
	if err := checkWasm(a.Spec.Wasm); err != nil {
		errs = append(errs, fmt.Errorf("Wasm: %w", err))
		closed = true
	}
	if len(a.Spec.Lua) > 0 {
		code, err := resolveLua(a, objs, luaOn, l.LuaValidation)
		if err != nil {
			errs = append(errs, fmt.Errorf("Lua: %w", err))
			closed = true
		}
		res.data.Lua = code
	}
	if len(a.Spec.ExtProc) > 0 {
		svcs, err, failOpen := resolveExtProcs(a, objs)
		if err != nil {
			errs = append(errs, fmt.Errorf("ExtProc: %w", err))
			closed = closed || !failOpen
		}
		res.data.ExtProc = svcs
	}
	if len(a.Spec.DynamicModule) > 0 {
		dms, err := dynamicModules(a, allowlist)
		if err != nil {
			errs = append(errs, fmt.Errorf("DynamicModule: %w", err))
			closed = true
		}
		res.data.DynamicModules = dms
	}
	res.err = errors.Join(errs...)
	res.failOpen = res.err != nil && !closed
	return res
}

// resolveLua checks the Lua gate, reads ConfigMap scripts and checks each script
// (checkLua) as it is read, in spec order.
func resolveLua(a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec], objs *RefObjects, luaOn bool,
	validation *egv1a1.LuaValidation) ([]string, error) {
	if !luaOn {
		return nil, errLuaDisabled
	}
	ns := a.NamespaceOf("lua")
	owner := a.OwnerOfPath("lua")
	var out []string
	check := func(i int, code string) error {
		if err := checkLua(code, validation); err != nil {
			return fmt.Errorf("validation failed for lua body in policy with name %s/%s/%s/lua/%d: %w",
				strings.ToLower(owner.Kind), owner.Namespace, owner.Name, i, err)
		}
		return nil
	}
	for i, l := range a.Spec.Lua {
		if l.Type != egv1a1.LuaValueTypeValueRef {
			if l.Inline == nil {
				return nil, fmt.Errorf("inline code is not set")
			}
			if err := check(i, *l.Inline); err != nil {
				return nil, err
			}
			out = append(out, *l.Inline)
			continue
		}
		if l.ValueRef == nil {
			return nil, fmt.Errorf("valueRef is not set")
		}
		v, found, ok := objs.configMapValue(ns, string(l.ValueRef.Name), luaConfigMapKey)
		switch {
		case !found:
			return nil, fmt.Errorf("can't find the referenced configmap %s in namespace %s", l.ValueRef.Name, ns)
		case !ok:
			return nil, fmt.Errorf("can't find the key %s in the referenced configmap %s", luaConfigMapKey, l.ValueRef.Name)
		}
		if err := check(i, v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// CheckTCPSecurity is EG's rule for a SecurityPolicy that targets a TCPRoute (SP-02): only
// authorization by client CIDRs can be enforced on a connection, so any other feature, and
// rules on CEL, JWT, headers or geolocation, make the policy invalid.
func CheckTCPSecurity(spec *egv1a1.SecurityPolicySpec) error {
	err := func() error {
		if spec.CORS != nil || spec.CSRF != nil || spec.JWT != nil || spec.OIDC != nil || spec.APIKeyAuth != nil ||
			spec.BasicAuth != nil || spec.ExtAuth != nil {
			return errors.New("only authorization is supported for TCP (routes/listeners)")
		}
		if spec.Authorization == nil {
			return nil
		}
		for i, r := range spec.Authorization.Rules {
			if r.CEL != nil {
				return fmt.Errorf("rule %d: CEL not supported for TCP", i)
			}
			p := r.Principal
			switch {
			case p == nil:
				continue
			case p.JWT != nil:
				return fmt.Errorf("rule %d: JWT not supported for TCP", i)
			case len(p.Headers) > 0:
				return fmt.Errorf("rule %d: headers not supported for TCP", i)
			case len(p.ClientIPGeoLocations) > 0:
				return fmt.Errorf("rule %d: clientIPGeoLocations not supported for TCP", i)
			}
			for _, c := range p.ClientCIDRs {
				if _, _, err := net.ParseCIDR(string(c)); err != nil {
					return fmt.Errorf("rule %d: invalid ClientCIDR %q: %w", i, c, err)
				}
			}
		}
		return nil
	}()
	if err != nil {
		return fmt.Errorf("invalid SecurityPolicy for TCP route: %w", err)
	}
	return nil
}
