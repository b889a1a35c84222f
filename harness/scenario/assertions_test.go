package scenario_test

import (
	"github.com/egharness/egharness/internal/testutil"
	"reflect"
	"strings"
	"testing"
)

func TestExpectationIDNotInCovers(t *testing.T) {
	text := strings.Replace(validScenario, "  - {kind: VirtualHost, name: default/eg/http/app_example_com}\n",
		"  - {id: RT-09, kind: VirtualHost, name: default/eg/http/app_example_com}\n", 1)
	path, msgs := loadErr(t, text)
	wantMsg(t, msgs, path, testutil.LineOf(t, text, "id: RT-09"), "expect.xds[0].id: RT-09 is not in covers (RT-01)")
}

func TestAssertions(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		name   string
		covers string
		expect string
		want   map[string]int
	}{
		{
			name:   "one ID: every expectation is tied to it",
			covers: "[RT-01]",
			expect: validExpect,
			want:   map[string]int{"RT-01": 4},
		},
		{
			name:   "two IDs: untagged expectations tie to neither",
			covers: "[RT-01, RT-03]",
			expect: validExpect,
			want:   map[string]int{"RT-01": 0, "RT-03": 0},
		},
		{
			name:   "two IDs: tagged expectations count for their ID",
			covers: "[RT-01, RT-03]",
			expect: strings.Replace(strings.Replace(validExpect,
				"  - {kind: VirtualHost,", "  - {id: RT-03, kind: VirtualHost,", 1),
				"  - request: {port: 80", "  - id: RT-01\n    request: {port: 80", 1),
			want: map[string]int{"RT-01": 1, "RT-03": 1},
		},
	}
	for _, c := range cases {
		text := "name: demo\ncovers: " + c.covers + "\n" + resourcesBlock + c.expect
		path := write(t, root, "routing/"+strings.ReplaceAll(c.name, " ", "-")+".yaml", text)
		s, err := loader(t, root).LoadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := s.Assertions(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Assertions() = %v, want %v", c.name, got, c.want)
		}
	}
}
