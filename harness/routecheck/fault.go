package routecheck

import (
	"fmt"

	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// evalFault follows Envoy's fault filter with a route's HTTPFault (EG's listener filter
// holds no fault of its own): a delay holds the request and does not change the answer;
// an abort answers with its HTTP status instead of forwarding. Whether a share of the
// requests is hit is decided by the request's random value, as for weighted clusters: the
// request is hit when random mod 1,000,000 is below the share in millionths (random 0 is
// hit by any share above zero). A gRPC abort is named and not evaluated (Envoy answers
// 200 with a grpc-status the checker does not model).
func evalFault(per *anypb.Any, state *requestState, eff *FilterEffect) (int, error) {
	f := &faultv3.HTTPFault{}
	if err := per.UnmarshalTo(f); err != nil {
		return 0, err
	}
	hit := func(p *typev3.FractionalPercent) bool {
		share := uint64(fractionOf(p) * 1000000)
		return share > 0 && state.req.Random%1000000 < share
	}
	var outcomes []string
	if d := f.GetDelay(); d != nil && hit(d.GetPercentage()) {
		outcomes = append(outcomes, "delayed "+d.GetFixedDelay().AsDuration().String())
	}
	reply := 0
	if a := f.GetAbort(); a != nil && hit(a.GetPercentage()) {
		switch {
		case a.GetHttpStatus() != 0:
			reply = int(a.GetHttpStatus())
			outcomes = append(outcomes, fmt.Sprintf("aborted %d", reply))
		case a.GetGrpcStatus() != 0:
			outcomes = append(outcomes, fmt.Sprintf("grpc abort %d (not evaluated)", a.GetGrpcStatus()))
		}
	}
	eff.Outcome = "no fault"
	if len(outcomes) > 0 {
		eff.Outcome = outcomes[0]
		if len(outcomes) > 1 {
			eff.Outcome += ", " + outcomes[1]
		}
	}
	return reply, nil
}
