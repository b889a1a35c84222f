package routecheck

import (
	"reflect"
	"testing"
	"time"

	faultcommonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/common/fault/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestFaultFilter(t *testing.T) {
	const name = "envoy.filters.http.fault"
	pct := func(millionths uint32) *typev3.FractionalPercent {
		return &typev3.FractionalPercent{Numerator: millionths, Denominator: typev3.FractionalPercent_MILLION}
	}
	h := rdsHCM("rc")
	h.HttpFilters = []*hcmv3.HttpFilter{
		{Name: name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &faultv3.HTTPFault{})}},
		routerFilter(t),
	}
	abort := &faultv3.HTTPFault{Abort: &faultv3.FaultAbort{Percentage: pct(1000000),
		ErrorType: &faultv3.FaultAbort_HttpStatus{HttpStatus: 503}}}
	half := &faultv3.HTTPFault{Abort: &faultv3.FaultAbort{Percentage: pct(500000),
		ErrorType: &faultv3.FaultAbort_HttpStatus{HttpStatus: 418}}}
	delay := &faultv3.HTTPFault{Delay: &faultcommonv3.FaultDelay{Percentage: pct(1000000),
		FaultDelaySecifier: &faultcommonv3.FaultDelay_FixedDelay{FixedDelay: durationpb.New(2 * time.Second)}}}
	grpc := &faultv3.HTTPFault{Abort: &faultv3.FaultAbort{Percentage: pct(1000000),
		ErrorType: &faultv3.FaultAbort_GrpcStatus{GrpcStatus: 14}}}
	tbl := hcmTable(t, h, routeConfig("rc", vhost("vh", []string{"*"},
		withFilters(t, prefixRoute("abort", "/abort", "c"), map[string]proto.Message{name: abort}),
		withFilters(t, prefixRoute("half", "/half", "c"), map[string]proto.Message{name: half}),
		withFilters(t, prefixRoute("delay", "/delay", "c"), map[string]proto.Message{name: delay}),
		withFilters(t, prefixRoute("grpc", "/grpc", "c"), map[string]proto.Message{name: grpc}),
		prefixRoute("plain", "/", "c"))))
	cases := []struct {
		path       string
		random     uint64
		status     int
		answeredBy string
		filters    []string
	}{
		{"/abort", 0, 503, "fault", []string{"fault::aborted 503"}},
		{"/half", 499999, 418, "fault", []string{"fault::aborted 418"}},
		{"/half", 500000, 200, "", []string{"fault::no fault"}},
		{"/half", 1500000, 200, "", []string{"fault::no fault"}},
		{"/delay", 0, 200, "", []string{"fault::delayed 2s"}},
		{"/grpc", 0, 200, "", []string{"fault::grpc abort 14 (not evaluated)"}},
		// the listener's filter holds no fault: routes without one are not touched
		{"/", 0, 200, "", nil},
	}
	for _, c := range cases {
		d, err := tbl.CheckDetailed(Request{Port: 10080, Host: "a", Path: c.path, Random: c.random})
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if d.Status != c.status || d.AnsweredBy != c.answeredBy || !reflect.DeepEqual(kinds(d), c.filters) {
			t.Errorf("%s (random %d): status %d, answered by %q, filters %q; want %d, %q, %q", c.path, c.random, d.Status,
				d.AnsweredBy, kinds(d), c.status, c.answeredBy, c.filters)
		}
	}
}
