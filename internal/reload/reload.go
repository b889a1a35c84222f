// Package reload keeps what one read of an input worked out for the next read of the same
// input: `serve --watch` reads a file again after each edit, and an edit changes little of
// it. Only what the last read used is kept, so memory follows the input, not its history.
package reload

import "sync"

// Cache holds two generations: what the last read used (looked in, and carried over when
// used again) and what the current read has used so far. Safe for concurrent use within a
// read; Turn ends a read.
type Cache[V any] struct {
	mu   sync.Mutex
	last map[string]V
	now  map[string]V
}

// Get returns the value kept under key by this read or the last one; a value of the last
// read is kept for the next.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.now[key]
	if !ok {
		if v, ok = c.last[key]; ok {
			c.put(key, v)
		}
	}
	return v, ok
}

// Put keeps v under key for the next read.
func (c *Cache[V]) Put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(key, v)
}

func (c *Cache[V]) put(key string, v V) {
	if c.now == nil {
		c.now = map[string]V{}
	}
	c.now[key] = v
}

// Turn ends a read: what it used is what the next one looks in.
func (c *Cache[V]) Turn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last, c.now = c.now, nil
}

// Reset forgets everything (what was worked out no longer holds).
func (c *Cache[V]) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last, c.now = nil, nil
}

// Len is how many values the next read can find.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.last)
}
