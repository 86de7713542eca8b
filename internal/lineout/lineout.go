// Package lineout writes a tool's output whole lines at a time: each line is
// one Write, under a lock, so that a parser reading a pipe never sees half a
// line and lines from different goroutines never interleave.
package lineout

import (
	"io"
	"sync"
)

// Writer serialises writes to w.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// New wraps w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes s as it is, in one call; use it for text that is already
// whole lines, or for progress lines that end in '\r'.
func (l *Writer) Write(s string) {
	if s == "" {
		return
	}
	l.mu.Lock()
	_, _ = io.WriteString(l.w, s)
	l.mu.Unlock()
}

// Line writes s and a newline in one call.
func (l *Writer) Line(s string) { l.Write(s + "\n") }
