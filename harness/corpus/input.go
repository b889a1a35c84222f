package corpus

import (
	"fmt"
	"io"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// WriteInput prints a prepared case as `egharness translate -f -` reads it: an EnvoyGateway
// document with the case's settings, then every object (the case's and the fixtures), so
// that one case can be looked at, or given to another tool, outside the corpus run. Merged
// Gateways are not an EnvoyGateway setting: they are said in a comment (translate
// --merge-gateways).
func WriteInput(w io.Writer, c Case, p Prepared) error {
	fmt.Fprintf(w, "# %s as EG's TestTranslate runs it (egharness corpus --print-input)\n", c.Name)
	if p.Settings.Config.MergeGateways {
		fmt.Fprintln(w, "# Gateways are merged: translate with --merge-gateways")
	}
	for _, s := range p.Settings.Inexpressible {
		fmt.Fprintf(w, "# needs a setting no option takes: %s\n", s)
	}
	eg := &egv1a1.EnvoyGateway{
		TypeMeta: metav1.TypeMeta{APIVersion: egv1a1.GroupVersion.String(), Kind: egv1a1.KindEnvoyGateway},
		EnvoyGatewaySpec: egv1a1.EnvoyGatewaySpec{
			ExtensionAPIs: p.Settings.Config.ExtensionAPIs,
			RuntimeFlags:  p.Settings.Config.RuntimeFlags,
			RateLimit:     p.Settings.Config.RateLimit,
		},
	}
	docs := []any{eg}
	for _, o := range p.Objects {
		docs = append(docs, o.Obj)
	}
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}
