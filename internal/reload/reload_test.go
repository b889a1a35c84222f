package reload

import "testing"

// A value is found by the next read only if the last one used it: memory follows the
// input, not its history.
func TestCacheKeepsWhatTheLastReadUsed(t *testing.T) {
	var c Cache[int]
	c.Put("a", 1)
	c.Put("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("within a read: %d %v", v, ok)
	}
	c.Turn()
	if c.Len() != 2 {
		t.Fatalf("after the first read: %d values", c.Len())
	}
	if v, ok := c.Get("b"); !ok || v != 2 { // used again: carried over
		t.Fatalf("second read: %d %v", v, ok)
	}
	c.Turn()
	if _, ok := c.Get("a"); ok {
		t.Error("a value the last read did not use is still there")
	}
	if _, ok := c.Get("b"); !ok {
		t.Error("a value the last read used is gone")
	}
	c.Reset()
	if _, ok := c.Get("b"); ok || c.Len() != 0 {
		t.Error("Reset kept a value")
	}
}
