package resource

import "sync"

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
	mu   sync.Mutex
	last map[string]cachedJSON // what the previous Decode met
	now  map[string]cachedJSON // what this one has met so far
}

type cachedJSON struct {
	js []byte
	tm typeMeta
}

func (c *JSONCache) get(text []byte) (cachedJSON, bool) {
	if c == nil {
		return cachedJSON{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.now[string(text)]
	if !ok {
		if e, ok = c.last[string(text)]; ok {
			c.keep(string(text), e)
		}
	}
	return e, ok
}

func (c *JSONCache) put(text []byte, js []byte, tm typeMeta) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keep(string(text), cachedJSON{js: js, tm: tm})
}

func (c *JSONCache) keep(text string, e cachedJSON) {
	if c.now == nil {
		c.now = map[string]cachedJSON{}
	}
	c.now[text] = e
}

// turn ends a Decode: what it met is what the next one looks in.
func (c *JSONCache) turn() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last, c.now = c.now, nil
}

// Len is how many documents the cache holds for the next Decode.
func (c *JSONCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.last)
}
