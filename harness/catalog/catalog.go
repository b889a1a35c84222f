// Package catalog reads the behavior catalog: the stable IDs scenarios cover.
package catalog

import (
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/scenarios"
)

// Behavior is one catalog entry.
type Behavior struct {
	ID      string `json:"id"`
	Area    string `json:"area"`
	Upgrade bool   `json:"upgrade"`
	Title   string `json:"title"`
}

// Catalog is the list of behaviors, in catalog order.
type Catalog struct {
	Behaviors []Behavior
	byID      map[string]*Behavior
}

// Load parses the embedded catalog.
func Load() (*Catalog, error) { return Parse(scenarios.CatalogYAML) }

// Parse reads a catalog document.
func Parse(data []byte) (*Catalog, error) {
	var doc struct {
		Behaviors []Behavior `json:"behaviors"`
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, fmt.Errorf("behavior catalog: %v", err)
	}
	c := &Catalog{Behaviors: doc.Behaviors, byID: map[string]*Behavior{}}
	for i := range c.Behaviors {
		b := &c.Behaviors[i]
		if b.ID == "" || b.Area == "" {
			return nil, fmt.Errorf("behavior catalog: entry %d needs an id and an area", i)
		}
		if _, dup := c.byID[b.ID]; dup {
			return nil, fmt.Errorf("behavior catalog: %s is listed twice", b.ID)
		}
		c.byID[b.ID] = b
	}
	return c, nil
}

// Get returns the behavior with id, or nil.
func (c *Catalog) Get(id string) *Behavior { return c.byID[id] }

// IDs lists every ID in catalog order.
func (c *Catalog) IDs() []string {
	out := make([]string, len(c.Behaviors))
	for i, b := range c.Behaviors {
		out[i] = b.ID
	}
	return out
}

// Areas lists the distinct areas, sorted.
func (c *Catalog) Areas() []string {
	set := map[string]bool{}
	for _, b := range c.Behaviors {
		set[b.Area] = true
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}
