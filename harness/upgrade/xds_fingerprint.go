package upgrade

import (
	"crypto/sha256"
	"encoding/hex"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	// linked in so that walkStrings opens tcp_proxy configs
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/egharness/egharness/harness/facts"
	"github.com/egharness/egharness/translator/result"
)

// Fingerprints and short renderings of xDS messages: what makes two entities' contents
// equal or different, and what a finding shows of them.

// walkStrings calls fn with the name and value of every string field of m, opening the
// Any fields whose types are linked in.
func walkStrings(m proto.Message, fn func(field, value string)) {
	var walk func(protoreflect.Message, int)
	walk = func(r protoreflect.Message, depth int) {
		if depth > 64 {
			return
		}
		if a, ok := r.Interface().(*anypb.Any); ok {
			if inner := facts.Unpack(a); inner != nil {
				walk(inner.ProtoReflect(), depth+1)
			}
			return
		}
		r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message(), depth+1)
				}
			case fd.IsMap():
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
						walk(mv.Message(), depth+1)
						return true
					})
				}
			case fd.Kind() == protoreflect.MessageKind:
				walk(v.Message(), depth+1)
			case fd.Kind() == protoreflect.StringKind && !fd.IsList():
				fn(string(fd.Name()), v.String())
			}
			return true
		})
	}
	walk(m.ProtoReflect(), 0)
}

// fp is a short fingerprint of a message: deterministic bytes (map order fixed), hashed.
func fp(m proto.Message) string {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return "unmarshalable"
	}
	return hashBytes(b)
}

// actionParts fingerprints a rate limit's actions.
func actionParts(rl *routev3.RateLimit) []string {
	out := make([]string, 0, len(rl.GetActions()))
	for _, a := range rl.GetActions() {
		out = append(out, fp(a))
	}
	return out
}

// isPrefix: short is non-empty and long begins with it.
func isPrefix(short, long []string) bool {
	if len(short) == 0 || len(short) > len(long) {
		return false
	}
	for i := range short {
		if short[i] != long[i] {
			return false
		}
	}
	return true
}

func fpAny(a *anypb.Any, m proto.Message) string {
	if m != nil {
		return fp(m)
	}
	return hashBytes(a.GetValue())
}

func hash(s string) string { return hashBytes([]byte(s)) }

func hashBytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// short renders a small message for before/after (long ones by fingerprint).
func short(m proto.Message, a *anypb.Any) string {
	if m == nil {
		return a.GetTypeUrl() + " " + hashBytes(a.GetValue())
	}
	b, err := result.MarshalResource(m)
	if err != nil {
		return fp(m)
	}
	s := string(b)
	if len(s) > 200 {
		return s[:160] + "… (" + fp(m) + ")"
	}
	return s
}
