package lineout

import (
	"strings"
	"sync"
	"testing"
)

// countingWriter records each Write call separately.
type countingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, string(p))
	c.mu.Unlock()
	return len(p), nil
}

func TestLinesAreSingleWrites(t *testing.T) {
	cw := &countingWriter{}
	w := New(cw)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				w.Line(strings.Repeat(string(rune('a'+i)), 50))
			}
		}()
	}
	wg.Wait()
	w.Write("")
	if len(cw.writes) != 800 {
		t.Fatalf("%d writes, want 800", len(cw.writes))
	}
	for _, s := range cw.writes {
		if len(s) != 51 || s[50] != '\n' || strings.Count(s, s[:1]) != 50 {
			t.Fatalf("torn line %q", s)
		}
	}
}
