package xds

import (
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	dmconfigv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/dynamic_modules/v3"
	dmfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/dynamic_modules/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// An EnvoyExtensionPolicy's dynamic modules: one dynamic_modules filter per module of the
// owning policy, disabled on the connection manager and turned on by the routes in force;
// a module downloaded from a URL is fetched through the URL's cluster (as remote JWKS are).

const dynamicModulesFilterType = ir.FilterDynamicModules

// addDynamicModules enables the route's modules, recording their filters and clusters.
func (s *httpFilterSet) addDynamicModules(out *routev3.Route, r *ir.HTTPRoute) error {
	if r.PolicyData == nil {
		return nil
	}
	for _, m := range r.PolicyData.DynamicModules {
		name := dynamicModulesFilterType + "/" + m.Name
		if _, ok := s.named[name]; !ok {
			src, err := s.moduleSource(m)
			if err != nil {
				return fmt.Errorf("dynamic module %s: %w", m.Name, err)
			}
			cfg := &dmfilterv3.DynamicModuleFilter{
				DynamicModuleConfig: &dmconfigv3.DynamicModuleConfig{DoNotClose: m.DoNotClose, LoadGlobally: m.LoadGlobally,
					Module: src},
				FilterName:     m.FilterName,
				TerminalFilter: m.TerminalFilter,
			}
			if m.Config != nil {
				// the module gets its JSON config as a string value
				cfg.FilterConfig = mustAny(wrapperspb.String(string(m.Config)))
			}
			f := typedFilter(name, cfg)
			f.Disabled = true
			s.named[name] = f
		}
		if err := setPerRoute(out, name, &routev3.FilterConfig{Config: &anypb.Any{}}); err != nil {
			return err
		}
	}
	return nil
}

// moduleSource is a local file, or a download through the URL's cluster, checked against
// the module's SHA-256.
func (s *httpFilterSet) moduleSource(m ir.DynamicModule) (*corev3.AsyncDataSource, error) {
	if m.RemoteURL == "" {
		return &corev3.AsyncDataSource{Specifier: &corev3.AsyncDataSource_Local{Local: &corev3.DataSource{
			Specifier: &corev3.DataSource_Filename{Filename: m.Path},
		}}}, nil
	}
	c, err := urlClusterOf(m.RemoteURL)
	if err != nil {
		return nil, err
	}
	s.addCluster(*c)
	return &corev3.AsyncDataSource{Specifier: &corev3.AsyncDataSource_Remote{Remote: &corev3.RemoteDataSource{
		HttpUri: &corev3.HttpUri{
			Uri:              m.RemoteURL,
			HttpUpstreamType: &corev3.HttpUri_Cluster{Cluster: c.cluster.GetName()},
			Timeout:          durationpb.New(extServiceTimeout),
		},
		Sha256: m.RemoteSHA256,
	}}}, nil
}
