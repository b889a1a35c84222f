package envoytier

import (
	"path/filepath"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/egharness/egharness/translator/result"
)

// trust is what rewriteTrust changed: the subject alt names and server names Envoy will
// check on upstream certificates (the TLS echo servers' leaves carry them all).
type trust struct {
	names []string
	// clientNames are the subject alt names listeners check on client certificates.
	clientNames []string
	// standIns are the secrets of external SDS servers the tier serves itself.
	standIns []string
}

// envoyClientSecret is the certificate Envoy presents to EG's rate limit service (and wasm
// HTTP server): EG's translator emits it from its controller's Secret envoy (made by EG's
// certgen, never part of a scenario); the reference translator does not, so Envoy would
// warm ratelimit_cluster until its SDS fetch times out (15s). The tier serves a stand-in.
const envoyClientSecret = "envoy-gateway-system/envoy"

// pemPair is a certificate and its key, PEM.
type pemPair struct{ cert, key []byte }

// fileSubstitutes maps files EG's Envoy pods have (and this machine may lack) onto the
// tier's: the certificates EG mounts at /certs (rate limit service, wasm and the like) and
// the system trust store, which becomes the tier CA (the stand-ins are the only servers
// reachable anyway).
func fileSubstitutes(dir string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		switch {
		case strings.HasPrefix(name, "/certs/"):
			return filepath.Join(dir, filepath.Base(name)), true
		case name == "/etc/ssl/certs/ca-certificates.crt":
			return filepath.Join(dir, "ca.crt"), true
		}
		return "", false
	}
}

// rewriteTrust moves secrets of external SDS servers onto the tier's ADS stream, and makes x's upstream TLS trust the
// tier CA (caPEM): each UpstreamTlsContext's inline validation context, and the SDS secrets such contexts name, get the
// tier CA as trusted_ca; file data sources the machine lacks are substituted. Downstream validation (client
// certificates) is left alone. x is changed in place (it is the tier's copy).
func rewriteTrust(x *result.XDS, caPEM []byte, standIn pemPair, files func(string) (string, bool)) trust {
	return rewriteTrustWith(x, caPEM, standIn, files, true)
}

// secretStandIns is rewriteTrust without the trust: secrets of external SDS servers and of
// EG's controller come from the ADS stream as stand-ins and files are substituted, but
// every CA stays the translation's. What Envoy must accept as translated.
func secretStandIns(x *result.XDS, caPEM []byte, standIn pemPair, files func(string) (string, bool)) {
	rewriteTrustWith(x, caPEM, standIn, files, false)
}

func rewriteTrustWith(x *result.XDS, caPEM []byte, standIn pemPair, files func(string) (string, bool),
	replaceCA bool) trust {
	var t trust
	trustSecrets := map[string]bool{}
	// Secrets an external SDS server (a socket on EG's node) would hand out: they come
	// from the tier's ADS stream instead, as stand-ins (certificate: a tier leaf;
	// validation context: the tier CA).
	external := map[string]string{} // name → "certificate" or "validation"
	fromADS := func(s *tlsv3.SdsSecretConfig, kind string) bool {
		if s.GetName() == envoyClientSecret {
			external[s.GetName()] = kind
		}
		if s == nil || s.GetSdsConfig() == nil || s.GetSdsConfig().GetAds() != nil {
			return false
		}
		external[s.GetName()] = kind
		s.SdsConfig = &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3,
			ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}
		return true
	}
	visit := func(m proto.Message) bool {
		switch v := m.(type) {
		case *tlsv3.CommonTlsContext:
			changed := false
			for _, c := range v.GetTlsCertificateSdsSecretConfigs() {
				changed = fromADS(c, "certificate") || changed
			}
			changed = fromADS(v.GetValidationContextSdsSecretConfig(), "validation") || changed
			changed = fromADS(v.GetCombinedValidationContext().GetValidationContextSdsSecretConfig(), "validation") || changed
			return changed
		case *corev3.DataSource:
			if f, ok := files(v.GetFilename()); ok {
				v.Specifier = &corev3.DataSource_Filename{Filename: f}
				return true
			}
		case *tlsv3.UpstreamTlsContext:
			if v.GetSni() != "" {
				t.names = append(t.names, v.GetSni())
			}
			if !replaceCA {
				return false
			}
			names, changed := trustTier(v.GetCommonTlsContext(), caPEM, trustSecrets)
			t.names = append(t.names, names...)
			return changed
		case *tlsv3.DownstreamTlsContext:
			// Client certificates: the tier's client presents a tier leaf, so a listener
			// that validates clients trusts the tier CA (scenarios speak for a client
			// with a valid certificate).
			if !replaceCA {
				return false
			}
			names, changed := trustTier(v.GetCommonTlsContext(), caPEM, trustSecrets)
			t.clientNames = append(t.clientNames, names...)
			return changed
		}
		return false
	}
	for _, c := range x.Clusters {
		walk(c.ProtoReflect(), visit)
	}
	for _, l := range x.Listeners {
		walk(l.ProtoReflect(), visit)
	}
	have := map[string]bool{}
	for _, s := range x.Secrets {
		have[s.GetName()] = true
	}
	for _, name := range slices.Sorted(mapKeys(external)) {
		if have[name] {
			continue
		}
		sec := &tlsv3.Secret{Name: name}
		if external[name] == "certificate" {
			sec.Type = &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
				CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: standIn.cert}},
				PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: standIn.key}},
			}}
		} else {
			sec.Type = &tlsv3.Secret_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
				TrustedCa: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: caPEM}},
			}}
		}
		x.Secrets = append(x.Secrets, sec)
		t.standIns = append(t.standIns, name)
	}
	for _, s := range x.Secrets {
		walk(s.ProtoReflect(), visit)
		if vc := s.GetValidationContext(); vc != nil && vc.GetTrustedCa() != nil && trustSecrets[s.GetName()] {
			t.names = append(t.names, subjectAltNames(vc)...)
			t.clientNames = append(t.clientNames, subjectAltNames(vc)...)
			vc.TrustedCa = &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: caPEM}}
		}
	}
	return t
}

// trustTier makes a TLS context's inline validation context trust the tier CA, records the
// validation secrets it names in secrets, and returns the subject alt names it checks.
func trustTier(c *tlsv3.CommonTlsContext, caPEM []byte, secrets map[string]bool) ([]string, bool) {
	var names []string
	changed := false
	if s := c.GetValidationContextSdsSecretConfig(); s != nil {
		secrets[s.GetName()] = true
	}
	if cv := c.GetCombinedValidationContext(); cv != nil {
		if s := cv.GetValidationContextSdsSecretConfig(); s != nil {
			secrets[s.GetName()] = true
		}
		if d := cv.GetDefaultValidationContext(); d != nil {
			names = append(names, subjectAltNames(d)...)
		}
	}
	if vc := c.GetValidationContext(); vc != nil && vc.GetTrustedCa() != nil {
		names = append(names, subjectAltNames(vc)...)
		vc.TrustedCa = &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: caPEM}}
		changed = true
	}
	return names, changed
}

func subjectAltNames(vc *tlsv3.CertificateValidationContext) []string {
	var out []string
	// A name each matcher accepts (a leaf carrying them all passes any one of them).
	for _, m := range vc.GetMatchTypedSubjectAltNames() {
		sm := m.GetMatcher()
		switch {
		case sm.GetExact() != "":
			out = append(out, sm.GetExact())
		case sm.GetSuffix() != "":
			out = append(out, "egharness"+sm.GetSuffix())
		case sm.GetPrefix() != "":
			out = append(out, sm.GetPrefix()+"egharness")
		case sm.GetContains() != "":
			out = append(out, "egharness"+sm.GetContains()+"egharness")
		}
	}
	return out
}

// walkListenersAndRoutes walks every listener and route configuration of x, in place.
func walkListenersAndRoutes(x *result.XDS, visit func(proto.Message) bool) {
	for _, l := range x.Listeners {
		walk(l.ProtoReflect(), visit)
	}
	for _, r := range x.Routes {
		walk(r.ProtoReflect(), visit)
	}
}

// walk calls visit on m and every message inside it, unpacking Any fields (typed_config)
// and packing them again when something inside changed. It reports a change.
func walk(m protoreflect.Message, visit func(proto.Message) bool) bool {
	changed := visit(m.Interface())
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			return changed // a type this binary does not know: nothing to rewrite inside
		}
		if walk(inner.ProtoReflect(), visit) {
			if b, err := anypb.New(inner); err == nil {
				a.Value = b.Value
				return true
			}
		}
		return changed
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				changed = walk(l.Get(i).Message(), visit) || changed
			}
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					changed = walk(mv.Message(), visit) || changed
					return true
				})
			}
		default:
			changed = walk(v.Message(), visit) || changed
		}
		return true
	})
	return changed
}
