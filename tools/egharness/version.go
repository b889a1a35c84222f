package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/egharness/egharness/translator/profile"
)

// version is egharness's own version; a release build sets it with
// -ldflags "-X main.version=v0.4.0". Otherwise it comes from the module build information
// (the tag `go install …@v0.4.0` built, or the VCS revision of a checkout).
var version = ""

// Modules whose versions are the ones the reference translator models; when the build
// information is missing (a stripped binary) the versions in go.mod at the time of writing
// stand in.
const (
	egModule          = "github.com/envoyproxy/gateway"
	gatewayAPIModule  = "sigs.k8s.io/gateway-api"
	egFallback        = "v1.9.1"
	gatewayAPIDefault = "v1.6.1"
)

// buildVersions reads egharness's, EG's and Gateway API's versions from the build.
func buildVersions() (own, eg, gwapi string) {
	own, eg, gwapi = version, egFallback, gatewayAPIDefault
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if own == "" {
			own = "unknown"
		}
		return own, eg, gwapi
	}
	for _, d := range info.Deps {
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version
		}
		switch d.Path {
		case egModule:
			eg = v
		case gatewayAPIModule:
			gwapi = v
		}
	}
	if own == "" {
		own = info.Main.Version
		var rev, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = "+modified"
				}
			}
		}
		if (own == "" || own == "(devel)") && rev != "" {
			own = "devel " + rev[:min(12, len(rev))] + modified
		} else if own == "" {
			own = "(devel)"
		}
	}
	return own, eg, gwapi
}

// gatewayAPIVersion is the Gateway API release the scenarios and the reference follow.
func gatewayAPIVersion() string {
	_, _, g := buildVersions()
	return g
}

// versionText is what --version prints.
func versionText() string {
	own, eg, gwapi := buildVersions()
	var b strings.Builder
	fmt.Fprintf(&b, "egharness %s\n", own)
	fmt.Fprintf(&b, "models Envoy Gateway %s (version profiles: %s) and Gateway API %s\n", eg,
		strings.Join(profile.Names(), ", "), gwapi)
	fmt.Fprintf(&b, "built with %s\n", runtime.Version())
	return b.String()
}
