package envoytier

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/egharness/egharness/harness/ratelimitsvc"
	"github.com/egharness/egharness/translator/result"
)

// services is the stand-in for the external services policies call: an ext_authz server
// (gRPC Authorization/Check and the HTTP flavour) that allows every request, an ext_proc
// server that lets every phase through unchanged, and EG's rate limit service
// (harness/ratelimitsvc: the scenario's limits, counted). The route checker's answers
// assume exactly that (an authorized request reaches its backend, a processor changes
// nothing), so the comparison checks that Envoy calls them and then routes as translated.
// Calls are counted per service.
type services struct {
	srv  *http.Server
	grpc *grpc.Server
	addr string

	// rls stands in for EG's rate limit service (ratelimit_cluster).
	rls *ratelimitsvc.Server

	mu    sync.Mutex
	calls map[string]int
}

// extServiceCluster matches the clusters EG builds for a policy's external services.
var extServiceCluster = regexp.MustCompile(
	`^(securitypolicy|envoyextensionpolicy)/[^/]+/[^/]+/(extauth|extproc)/[0-9]+$`)

func newServices(lo *loopback, ca *authority) (*services, error) {
	s := &services{calls: map[string]int{}, grpc: grpc.NewServer(), rls: ratelimitsvc.NewServer()}
	authv3.RegisterAuthorizationServer(s.grpc, allowAll{s})
	rlsv3.RegisterRateLimitServiceServer(s.grpc, s.rls)
	extprocv3.RegisterExternalProcessorServer(s.grpc, passThrough{s})
	protocols := httpProtocols()
	s.srv = &http.Server{Protocols: protocols, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			s.grpc.ServeHTTP(w, r)
			return
		}
		// An HTTP ext_authz check: any 2xx allows.
		s.count("ext_authz (HTTP)")
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})}
	var err error
	if s.addr, err = serveStandIn(lo, ca, s.srv); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *services) count(what string) {
	s.mu.Lock()
	s.calls[what]++
	s.mu.Unlock()
}

func (s *services) close() {
	_ = s.srv.Close()
	s.grpc.Stop()
}

// clusters lists the external service clusters of x.
func extServiceClusters(x *result.XDS) map[string]bool {
	out := map[string]bool{}
	for _, c := range x.Clusters {
		if extServiceCluster.MatchString(c.GetName()) {
			out[c.GetName()] = true
		}
	}
	return out
}

type allowAll struct{ s *services }

func (a allowAll) Check(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	a.s.count("ext_authz (gRPC)")
	return &authv3.CheckResponse{Status: &status.Status{Code: int32(codes.OK)}}, nil
}

type passThrough struct{ s *services }

func (p passThrough) Process(stream extprocv3.ExternalProcessor_ProcessServer) error {
	p.s.count("ext_proc")
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		resp := &extprocv3.ProcessingResponse{}
		switch req.GetRequest().(type) {
		case *extprocv3.ProcessingRequest_RequestHeaders:
			resp.Response = &extprocv3.ProcessingResponse_RequestHeaders{RequestHeaders: &extprocv3.HeadersResponse{}}
		case *extprocv3.ProcessingRequest_RequestBody:
			resp.Response = &extprocv3.ProcessingResponse_RequestBody{RequestBody: &extprocv3.BodyResponse{}}
		case *extprocv3.ProcessingRequest_RequestTrailers:
			resp.Response = &extprocv3.ProcessingResponse_RequestTrailers{RequestTrailers: &extprocv3.TrailersResponse{}}
		case *extprocv3.ProcessingRequest_ResponseHeaders:
			resp.Response = &extprocv3.ProcessingResponse_ResponseHeaders{ResponseHeaders: &extprocv3.HeadersResponse{}}
		case *extprocv3.ProcessingRequest_ResponseBody:
			resp.Response = &extprocv3.ProcessingResponse_ResponseBody{ResponseBody: &extprocv3.BodyResponse{}}
		case *extprocv3.ProcessingRequest_ResponseTrailers:
			resp.Response = &extprocv3.ProcessingResponse_ResponseTrailers{ResponseTrailers: &extprocv3.TrailersResponse{}}
		default:
			continue
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}
