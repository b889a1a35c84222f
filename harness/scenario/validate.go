package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// Validating a loaded scenario: its name, covers and profiles, and every expectation (the
// objects, kinds, parents and behavior IDs it names), each problem with its line.

func (l Loader) validate(s *Scenario, addf func(int, string, ...any)) {
	switch {
	case s.Name == "":
		addf(s.Line(""), "name is required")
	case !nameRE.MatchString(s.Name):
		addf(s.Line("name"), "name %q: use lower case letters, digits, '-' and '.'", s.Name)
	}
	if len(s.Covers) == 0 {
		addf(s.Line(""), "covers is required: the behavior IDs this scenario pins")
	}
	for i, id := range s.Covers {
		if l.Catalog.Get(id) == nil {
			addf(s.Line(fmt.Sprintf("covers[%d]", i)), "covers: unknown behavior ID %q (see scenarios/behaviors.yaml)", id)
		}
	}
	known := map[string]bool{}
	for i, p := range s.Profiles {
		if _, err := profile.Get(p); err != nil {
			addf(s.Line(fmt.Sprintf("profiles[%d]", i)), "%v", err)
		}
		if known[p] {
			addf(s.Line(fmt.Sprintf("profiles[%d]", i)), "profile %s is listed twice", p)
		}
		known[p] = true
	}
	if u := s.Upgrade; u != nil {
		l.validateUpgrade(s, u, addf)
	}
	for p := range s.ExpectByProfile {
		if !contains(s.ProfilesOrDefault(), p) {
			addf(s.Line("expectByProfile."+p), "expectByProfile.%s: the scenario does not run under %s (profiles: %s)", p, p,
				strings.Join(s.ProfilesOrDefault(), ", "))
		}
	}
	if (s.Resources == "") == (s.ResourcesFile == "") {
		addf(s.Line(""), "set exactly one of resources (inline YAML) and resourcesFile")
	}
	for i, d := range s.Divergences {
		at := fmt.Sprintf("divergences[%d]", i)
		switch {
		case d.Impl == "" || d.Impl == "reference":
			addf(s.Line(at), "%s: impl names the implementation that diverges (egctl@v1.9.1, exec:...), not the reference", at)
		case strings.TrimSpace(d.Reason) == "":
			addf(s.Line(at), "%s: reason is required: say what %s does differently and why", at, d.Impl)
		case len(d.Facts) == 0:
			addf(s.Line(at), "%s: facts is required: the fact keys or expectation paths it explains", at)
		}
		for j, p := range d.Profiles {
			if !contains(s.ProfilesOrDefault(), p) {
				addf(s.Line(fmt.Sprintf("%s.profiles[%d]", at, j)), "%s: the scenario does not run under %s", at, p)
			}
		}
	}
}

// validateRefs checks that every object an expectation names is among the scenario's
// objects, so a typo fails at load time rather than as a puzzling check failure.
func (l Loader) validateRefs(s *Scenario, addf func(int, string, ...any)) {
	objs := map[resource.Ref]bool{}
	for _, o := range s.Objects {
		objs[o.Ref()] = true
	}
	check := func(path, ref string, mustExist bool) {
		r, err := resource.ParseRef(ref)
		if err != nil {
			addf(s.Line(path), "%s: %v", path, err)
			return
		}
		if mustExist && !objs[r] {
			addf(s.Line(path), "%s: %s is not among the scenario's objects", path, ref)
		}
	}
	if s.Upgrade != nil {
		for i, f := range s.Upgrade.Findings {
			check(fmt.Sprintf("upgrade.findings[%d].object", i), f.Object, true)
		}
	}
	sections := map[string]Expect{"expect": s.Expect}
	for p, e := range s.ExpectByProfile {
		sections["expectByProfile."+p] = e
	}
	keys := make([]string, 0, len(sections))
	for k := range sections {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	names := newObjIndex(s)
	for _, k := range keys {
		e := sections[k]
		checkAbsentNames(s, k, e, names, addf)
		for i, a := range e.Admission {
			check(fmt.Sprintf("%s.admission[%d].object", k, i), a.Object, true)
		}
		for i, st := range e.Statuses {
			p := fmt.Sprintf("%s.statuses[%d]", k, i)
			check(p+".object", st.Object, true)
			if st.Parent != "" {
				if _, err := ParseParent(st.Parent); err != nil {
					addf(s.Line(p+".parent"), "%s.parent: %v", p, err)
				}
			}
			if st.Listener != "" && st.Parent != "" {
				addf(s.Line(p), "%s: set listener or parent, not both", p)
			}
			for j, c := range st.Conditions {
				if c.Type == "" {
					addf(s.Line(fmt.Sprintf("%s.conditions[%d]", p, j)), "%s.conditions[%d]: type is required", p, j)
				}
			}
		}
		for i, x := range e.XDS {
			p := fmt.Sprintf("%s.xds[%d]", k, i)
			if !contains(XDSKinds, x.Kind) {
				addf(s.Line(p+".kind"), "%s.kind: %q is not one of %s", p, x.Kind, strings.Join(XDSKinds, ", "))
			}
			switch {
			case x.Prefix != "" || len(x.Names) > 0:
				if x.Prefix == "" || len(x.Names) == 0 || x.Name != "" || x.Absent {
					addf(s.Line(p), "%s: prefix and names go together, without name or absent", p)
				}
				for _, n := range x.Names {
					if !strings.HasPrefix(n, x.Prefix) {
						addf(s.Line(p+".names"), "%s.names: %q does not start with the prefix %q", p, n, x.Prefix)
					}
				}
			case x.Name == "":
				addf(s.Line(p), "%s.name is required", p)
			}
			if (len(x.Routes) > 0 || len(x.Domains) > 0) && x.Kind != KindVirtualHost {
				addf(s.Line(p), "%s: routes and domains belong to a VirtualHost", p)
			}
			if x.ClusterType != "" && x.Kind != KindCluster {
				addf(s.Line(p), "%s: clusterType belongs to a Cluster", p)
			}
			if (len(x.HealthChecks) > 0 || x.OutlierDetection != nil) && x.Kind != KindCluster {
				addf(s.Line(p), "%s: healthChecks and outlierDetection belong to a Cluster", p)
			}
			for _, h := range x.HealthChecks {
				if !contains([]string{"HTTP", "TCP", "GRPC", "none"}, h) {
					addf(s.Line(p+".healthChecks"), "%s.healthChecks: %q is not one of HTTP, TCP, GRPC, none", p, h)
				}
			}
			if (len(x.ChainBlocks) > 0 || len(x.KeyBlocks) > 0) && x.Kind != KindSecret {
				addf(s.Line(p), "%s: chainBlocks and keyBlocks belong to a Secret", p)
			}
			if (len(x.ALPN) > 0 || len(x.Certificates) > 0) && x.Kind != KindFilterChain {
				addf(s.Line(p), "%s: alpn and certificates belong to a FilterChain", p)
			}
			if x.HCM != nil && x.Kind != KindFilterChain {
				addf(s.Line(p), "%s: hcm belongs to a FilterChain", p)
			}
			if x.Fields != nil && x.Kind != KindRoute && x.Kind != KindCluster && x.Kind != KindSecret &&
				x.Kind != KindListener {
				addf(s.Line(p), "%s: fields belong to a Listener, a Route, a Cluster or a Secret", p)
			}
			if len(x.TrustedCAs) > 0 && x.Kind != KindSecret {
				addf(s.Line(p), "%s: trustedCAs belong to a Secret", p)
			}
			if (x.MinTLS != "" || x.MaxTLS != "" || len(x.Ciphers) > 0 || x.ClientCA != "" ||
				x.RequireClientCertificate != nil) && x.Kind != KindFilterChain {
				addf(s.Line(p), "%s: minTLS, maxTLS, ciphers, clientCA and requireClientCertificate belong to a FilterChain", p)
			}
		}
		for i, pe := range e.Patches {
			p := fmt.Sprintf("%s.patches[%d]", k, i)
			check(p+".policy", pe.Policy, true)
			if r, err := resource.ParseRef(pe.Policy); err == nil && r.Kind != "EnvoyPatchPolicy" {
				addf(s.Line(p+".policy"), "%s.policy: %s is not an EnvoyPatchPolicy", p, pe.Policy)
			}
			if pe.Operation < 0 {
				addf(s.Line(p+".operation"), "%s.operation: %d is not an index", p, pe.Operation)
			}
			if pe.Outcome != OutcomeHit && pe.Outcome != OutcomeMiss {
				addf(s.Line(p+".outcome"), "%s.outcome: %q is not %s or %s", p, pe.Outcome, OutcomeHit, OutcomeMiss)
			}
			if pe.Outcome == OutcomeHit && pe.Reason != "" {
				addf(s.Line(p+".reason"), "%s.reason: a hit has no reason", p)
			}
		}
		for i, sn := range e.Snapshot {
			p := fmt.Sprintf("%s.snapshot[%d]", k, i)
			if sn.IRRoute != "" {
				switch {
				case sn.Cluster != "" || sn.LoadBalancing != nil || sn.SessionPersistence != nil || sn.CircuitBreaker != nil:
					addf(s.Line(p), "%s: an irRoute takes fields and absent, not a cluster's fields", p)
				case sn.Fields == nil && len(sn.Absent) == 0:
					addf(s.Line(p), "%s checks nothing", p)
				}
				for _, a := range sn.Absent {
					if _, given := sn.Fields[a]; given {
						addf(s.Line(p+".absent"), "%s.absent: %s is also given a value", p, a)
					}
				}
				continue
			}
			if sn.Fields != nil || sn.In != "" {
				addf(s.Line(p), "%s: fields and in belong to an irRoute", p)
			}
			if sn.Cluster == "" {
				addf(s.Line(p), "%s.cluster (or irRoute) is required", p)
			}
			given := map[string]bool{"loadBalancing": sn.LoadBalancing != nil,
				"session_persistence": sn.SessionPersistence != nil, "circuitBreaker": sn.CircuitBreaker != nil}
			for _, a := range sn.Absent {
				set, known := given[a]
				switch {
				case !known:
					addf(s.Line(p+".absent"), "%s.absent: %q is not loadBalancing, session_persistence or circuitBreaker", p, a)
				case set:
					addf(s.Line(p+".absent"), "%s.absent: %s is also given a value", p, a)
				}
			}
			if len(sn.Absent) == 0 && sn.LoadBalancing == nil && sn.SessionPersistence == nil && sn.CircuitBreaker == nil {
				addf(s.Line(p), "%s checks nothing", p)
			}
		}
		for i, t := range e.Traffic {
			p := fmt.Sprintf("%s.traffic[%d]", k, i)
			if t.Request.Port == 0 {
				addf(s.Line(p+".request"), "%s.request.port is required", p)
			}
			if pr := strings.ToUpper(t.Request.Protocol); pr != "" && pr != "TCP" && pr != "UDP" {
				addf(s.Line(p+".request.protocol"), "%s.request.protocol: %q is not TCP or UDP", p, t.Request.Protocol)
			}
			if t.Expect.IsZero() {
				addf(s.Line(p), "%s.expect checks nothing", p)
			}
			if n := t.Request.HeaderBytes; n != 0 {
				if n <= len(PaddingHeader) || n > maxHeaderBytes {
					addf(s.Line(p+".request.headerBytes"), "%s.request.headerBytes: %d is not between %d and %d", p, n,
						len(PaddingHeader)+1, maxHeaderBytes)
				} else {
					h := make(map[string]string, len(t.Request.Headers)+1)
					for k, v := range t.Request.Headers {
						h[k] = v
					}
					h[PaddingHeader] = strings.Repeat("p", n-len(PaddingHeader))
					e.Traffic[i].Request.Headers = h
				}
			}
		}
		checkIDs(s, k, e, addf)
	}
}

// ExpectID is an expectation that can carry an id: its section's key in the scenario file
// (admission, statuses...), its index there, and its id ("" when untagged).
type ExpectID struct {
	Section string
	Index   int
	ID      string
}

// IDs lists every expectation of e that can carry an id, section by section in the order
// of Expect's fields (warnings carry none).
func (e Expect) IDs() []ExpectID {
	var out []ExpectID
	out = sectionIDs(out, "admission", e.Admission, func(x *AdmissionExpect) string { return x.ID })
	out = sectionIDs(out, "statuses", e.Statuses, func(x *StatusExpect) string { return x.ID })
	out = sectionIDs(out, "xds", e.XDS, func(x *XDSExpect) string { return x.ID })
	out = sectionIDs(out, "traffic", e.Traffic, func(x *TrafficExpect) string { return x.ID })
	out = sectionIDs(out, "patches", e.Patches, func(x *PatchExpect) string { return x.ID })
	out = sectionIDs(out, "snapshot", e.Snapshot, func(x *SnapshotExpect) string { return x.ID })
	return out
}

// sectionIDs appends to out the id of each expectation of one section, with its index: the
// sections are lists of different types that all carry an ID field.
func sectionIDs[T any](out []ExpectID, section string, items []T, id func(*T) string) []ExpectID {
	for i := range items {
		out = append(out, ExpectID{Section: section, Index: i, ID: id(&items[i])})
	}
	return out
}

// checkIDs: an expectation's id must be one of the scenario's covers (it says which
// covered behavior the expectation asserts).
func checkIDs(s *Scenario, k string, e Expect, addf func(int, string, ...any)) {
	for _, x := range e.IDs() {
		if x.ID == "" || contains(s.Covers, x.ID) {
			continue
		}
		p := fmt.Sprintf("%s.%s[%d].id", k, x.Section, x.Index)
		addf(s.Line(p), "%s: %s is not in covers (%s): an expectation asserts one of the behaviors the scenario covers", p,
			x.ID, strings.Join(s.Covers, ", "))
	}
}

// ParentParsed is a parsed parent reference.
type ParentParsed struct {
	Kind, Namespace, Name, SectionName string
	Port                               int32
}

// ParseParent reads Kind/namespace/name[/sectionName][:port], or Kind/name for a
// cluster-scoped kind.
func ParseParent(s string) (ParentParsed, error) {
	var port int32
	if head, p, ok := strings.Cut(s, ":"); ok {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n <= 0 {
			return ParentParsed{}, fmt.Errorf("parent %q: the port after ':' must be a number", s)
		}
		s, port = head, int32(n)
	}
	parts := strings.Split(s, "/")
	// A cluster-scoped ancestor (a GatewayClass, e.g. of an EnvoyPatchPolicy under
	// mergeGateways) has no namespace: Kind/name.
	if len(parts) == 2 && resource.ClusterScoped(parts[0]) && parts[1] != "" && port == 0 {
		return ParentParsed{Kind: parts[0], Name: parts[1]}, nil
	}
	if len(parts) < 3 || len(parts) > 4 {
		return ParentParsed{}, fmt.Errorf("parent %q: want Kind/namespace/name or Kind/namespace/name/sectionName", s)
	}
	for _, p := range parts {
		if p == "" {
			return ParentParsed{}, fmt.Errorf("parent %q has an empty part", s)
		}
	}
	pp := ParentParsed{Kind: parts[0], Namespace: parts[1], Name: parts[2], Port: port}
	if len(parts) == 4 {
		pp.SectionName = parts[3]
	}
	return pp, nil
}
