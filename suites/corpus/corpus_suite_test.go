// Package corpus runs EG's own translator testdata (internal/gatewayapi/testdata of the EG
// module go.mod requires, read from the Go module cache) through the reference translator:
// one ginkgo spec per case, labelled with its prefix (httproute, securitypolicy...), that
// fails when the case disagrees with EG's recorded statuses without a reason recorded in
// corpus/known.yaml, when it cannot be read or translated, or when its recorded reason is
// stale.
package corpus

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/egharness/egharness/harness/corpus"
)

const knownFile = "../../" + corpus.KnownFile

func TestCorpus(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Corpus")
}

var _ = Describe("EG translator testdata", func() {
	dir, err := corpus.DefaultDir()
	if err != nil {
		It("finds EG's testdata in the module cache", func() { Fail(err.Error()) })
		return
	}
	cases, err := corpus.Cases(dir)
	if err != nil {
		It("lists the cases", func() { Fail(err.Error()) })
		return
	}
	known, err := corpus.LoadKnown(knownFile)
	if err != nil {
		It("loads "+corpus.KnownFile, func() { Fail(err.Error()) })
		return
	}
	It("records reasons only for cases the corpus has", func() {
		names := make([]string, 0, len(cases))
		for _, c := range cases {
			names = append(names, c.Name)
		}
		Expect(known.Unknown("reference", names)).To(BeEmpty())
	})
	It("has the cases of EG's TestTranslate", func() { Expect(len(cases)).To(BeNumerically(">", 700)) })
	for _, c := range cases {
		c := c
		It(c.Name, Label(c.Prefix), func(ctx context.Context) {
			r := corpus.Run(ctx, []corpus.Case{c}, corpus.Options{Known: known})[0]
			var detail bytes.Buffer
			corpus.WriteText(&detail, []corpus.CaseResult{r}, corpus.Summarize("reference", nil), true)
			Expect(r.Verdict.Failed()).To(BeFalse(),
				fmt.Sprintf("%s\n(record a reason in %s only when the reference cannot follow EG yet)", detail.String(),
					corpus.KnownFile))
		})
	}
})
