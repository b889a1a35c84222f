package resource_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/resource"
)

// A decode that finds its documents' JSON in the cache gives what a decode without it
// gives, lines and errors included, after edits that change, move, add and break
// documents; the cache holds only the last file's documents.
func TestJSONCacheDecodesAlike(t *testing.T) {
	doc := func(i int, extra string) string {
		return fmt.Sprintf(
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r%d, namespace: ns%s}\nspec:\n"+
				"  parentRefs: [{name: eg}]\n",
			i, extra)
	}
	var docs []string
	for i := range 100 { // enough documents to be decoded on every core
		docs = append(docs, doc(i, ""))
	}
	files := []string{
		strings.Join(docs, "---\n"),
		// one document changed
		strings.Join(append(append([]string{}, docs[:50]...), append([]string{doc(50, "-edited")}, docs[51:]...)...),
			"---\n"),
		// a document added at the top: every line moves
		"apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: ns}\nspec: {ports: [{port: 80}]}\n---\n" +
			strings.Join(docs, "---\n"),
		// a broken document and an unknown field among them
		strings.Join(append([]string{"kind: [\n", doc(0, "\nspec: {unknownField: 1}")}, docs[2:]...), "---\n"),
		strings.Join(docs[:10], "---\n"),
	}
	cache := &resource.JSONCache{}
	for round := range 2 {
		for i, f := range files {
			want, wantErr := resource.Decode("f.yaml", []byte(f), resource.Options{SkipUnknownKinds: true})
			got, gotErr := resource.Decode("f.yaml", []byte(f), resource.Options{SkipUnknownKinds: true, JSONCache: cache})
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("round %d file %d: error %v, want %v", round, i, gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d file %d: decoded differently with the cache", round, i)
			}
		}
	}
	if n := cache.Len(); n != 10 {
		t.Errorf("the cache holds %d documents after a file of 10", n)
	}
}
