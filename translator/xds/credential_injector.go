package xds

import (
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	injectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/credential_injector/v3"
	genericv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/injected_credentials/generic/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/egharness/egharness/translator/ir"
)

// An HTTPRouteFilter's credentialInjection: one credential_injector filter per
// HTTPRouteFilter on the connection manager, disabled there and turned on by the routes
// that use it; the credential travels as a generic SDS secret of its own.

// addCredentialInjection records the route's credential injector and enables it on out.
func (s *httpFilterSet) addCredentialInjection(out *routev3.Route, c *ir.CredentialInjection) error {
	name := ir.FilterCredentialInjector + "/" + c.Name
	secret := "credential_injector/credential/" + c.Name
	if _, ok := s.named[name]; !ok {
		generic := &genericv3.Generic{Credential: &tlsv3.SdsSecretConfig{Name: secret, SdsConfig: adsSource()}}
		if c.Header != nil {
			generic.Header = *c.Header // "" leaves Envoy's default, Authorization
		}
		cfg := &injectorv3.CredentialInjector{Credential: &corev3.TypedExtensionConfig{
			Name: "envoy.http.injected_credentials.generic", TypedConfig: mustAny(generic),
		}}
		if c.Overwrite != nil {
			cfg.Overwrite = *c.Overwrite
		}
		f := typedFilter(name, cfg)
		f.Disabled = true
		s.named[name] = f
		s.addSecret(&tlsv3.Secret{Name: secret, Type: &tlsv3.Secret_GenericSecret{GenericSecret: &tlsv3.GenericSecret{
			Secret: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: c.Credential}},
		}}})
	}
	if err := setPerRoute(out, name, &routev3.FilterConfig{Config: &anypb.Any{}}); err != nil {
		return fmt.Errorf("credential injection %s: %w", c.Name, err)
	}
	return nil
}
