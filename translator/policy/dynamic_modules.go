package policy

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// An EnvoyExtensionPolicy's dynamicModule (EG v1.9): each module must be on the allowlist of
// the EnvoyProxy of the route's Gateway (spec.dynamicModules), which says where the module
// comes from (a local file, or a download checked against its SHA-256) and how it is loaded.

// dynamicModules resolves the policy's modules against the allowlist, with EG's errors;
// every module that does resolve is returned.
func dynamicModules(a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec],
	allowlist []egv1a1.DynamicModuleEntry) ([]ir.DynamicModule, error) {
	byName := make(map[string]*egv1a1.DynamicModuleEntry, len(allowlist))
	for i := range allowlist {
		byName[allowlist[i].Name] = &allowlist[i]
	}
	owner := a.OwnerOf("dynamicModule")
	var out []ir.DynamicModule
	var errs []error
	for i, dm := range a.Spec.DynamicModule {
		entry := byName[dm.Name]
		if entry == nil {
			errs = append(errs,
				fmt.Errorf("dynamic module %q is not registered in the EnvoyProxy dynamicModules allowlist", dm.Name))
			continue
		}
		m := ir.DynamicModule{
			Name:           fmt.Sprintf("envoyextensionpolicy/%s/%s/dynamic-module/%d", owner.Namespace, owner.Name, i),
			DoNotClose:     entry.DoNotClose != nil && *entry.DoNotClose,
			LoadGlobally:   entry.LoadGlobally != nil && *entry.LoadGlobally,
			TerminalFilter: dm.TerminalFilter != nil && *dm.TerminalFilter,
		}
		if dm.FilterName != nil {
			m.FilterName = *dm.FilterName
		}
		if dm.Config != nil {
			m.Config = dm.Config.Raw
		}
		if err := moduleSource(&m, dm.Name, entry.Source); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, m)
	}
	return out, errors.Join(errs...)
}

// moduleSource reads where a module comes from: a local path (the default type) or a
// remote URL, which must be http(s) with a host and come with a SHA-256.
func moduleSource(m *ir.DynamicModule, name string, src egv1a1.DynamicModuleSource) error {
	typ := egv1a1.LocalDynamicModuleSourceType
	if src.Type != nil {
		typ = *src.Type
	}
	switch typ {
	case egv1a1.RemoteDynamicModuleSourceType:
		r := src.Remote
		switch {
		case r == nil:
			return fmt.Errorf("dynamic module %q has no remote source configured", name)
		case r.URL == "":
			return fmt.Errorf("dynamic module %q has no remote source URL configured", name)
		case r.SHA256 == "":
			return fmt.Errorf("dynamic module %q has no remote source SHA256 configured", name)
		}
		if err := checkModuleURL(r.URL); err != nil {
			return fmt.Errorf("dynamic module %q has invalid remote source URL %q: %w", name, r.URL, err)
		}
		m.RemoteURL, m.RemoteSHA256 = r.URL, r.SHA256
	case egv1a1.LocalDynamicModuleSourceType:
		if src.Local == nil {
			return fmt.Errorf("dynamic module %q has no local source configured", name)
		}
		m.Path = src.Local.Path
	default:
		return fmt.Errorf("dynamic module %q has unsupported source type %q", name, typ)
	}
	return nil
}

// checkModuleURL is EG's check of a module download URL.
func checkModuleURL(raw string) error {
	u, err := url.ParseRequestURI(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("unsupported URL scheme %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return errors.New("URL must include a hostname")
	}
	if p := u.Port(); p != "" {
		if _, err := strconv.Atoi(p); err != nil {
			return fmt.Errorf("invalid URL port %q: %w", p, err)
		}
	}
	return nil
}
