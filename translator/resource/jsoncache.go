package resource

import "github.com/egharness/egharness/internal/reload"

// JSONCache keeps the JSON form of a file's documents from one Decode to the next, for a
// process that reads the same file again after each edit (`serve --watch`): converting YAML
// to JSON is most of what decoding costs (on the 10k-route mix, 10 of 18 s of a reload's
// CPU before this cache), and an edit changes a few documents of thousands. A document is
// found again by its text, wherever it moved; only documents that decoded without error
// and hold no aliases (whose expansion counts against a budget shared with the documents
// before them) are kept. Each Decode keeps only the documents it met, so the cache holds
// one file's worth however many reloads run. The typed decode still runs every time: its
// objects belong to the caller, who may change them.
type JSONCache struct {
	entries reload.Cache[cachedJSON]
}

type cachedJSON struct {
	js []byte
	tm typeMeta
}

func (c *JSONCache) get(text []byte) (cachedJSON, bool) {
	if c == nil {
		return cachedJSON{}, false
	}
	return c.entries.Get(string(text))
}

func (c *JSONCache) put(text []byte, js []byte, tm typeMeta) {
	if c != nil {
		c.entries.Put(string(text), cachedJSON{js: js, tm: tm})
	}
}

// turn ends a Decode: what it met is what the next one looks in.
func (c *JSONCache) turn() {
	if c != nil {
		c.entries.Turn()
	}
}

// Len is how many documents the cache holds for the next Decode.
func (c *JSONCache) Len() int { return c.entries.Len() }
