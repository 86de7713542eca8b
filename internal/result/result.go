// Package result is the one record every tool produces of a run: what ran
// (tool, emulated release, command line, host, times) and, per test, the
// counts, the elapsed time, per-interval counts and the full latency
// histograms. The original's lines are one report of it (each tool's
// report.go); the JSON result file is another (this package), in a format
// that is the same for every tool, so that runs from several hosts can be
// merged and drawn. schema.json describes the file.
package result

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/perfclones/perfclones/internal/latency"
)

// Schema names the file format; it changes when a field changes meaning.
const Schema = "perfclones-result/1"

// Env is the variable that asks for a result file without changing a
// script's command line.
const Env = "PERFCLONES_RESULT"

// Run is one invocation of a tool.
type Run struct {
	Schema  string    `json:"schema"`
	Tool    string    `json:"tool"`    // the original's command name: "redis-benchmark"
	Release string    `json:"release"` // the emulated release: "7.4", "3.9"
	Args    []string  `json:"args"`    // the command line after the program name
	Host    string    `json:"host"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	// Ending says how the run ended: "completed", "interrupted" (a signal),
	// or "failed" (a fatal error; Error says which).
	Ending   string `json:"ending"`
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code"`
	Tests    []Test `json:"tests"`
}

// Test is one measured phase of a run: one redis-benchmark test ("SET"),
// or the whole of a producer's or consumer's run.
type Test struct {
	Name           string    `json:"name"`
	Start          time.Time `json:"start"`
	End            time.Time `json:"end"`
	ElapsedSeconds float64   `json:"elapsed_seconds"`
	Counts         Counts    `json:"counts"`
	// Intervals are the counts per reporting window, in order, as the
	// tool's progress lines saw them.
	Intervals []Interval `json:"intervals,omitempty"`
	// Latency holds one histogram per measured quantity, keyed by what it
	// measures: "request" (redis), "send" (producers: send to acknowledgement),
	// "consume" (end-to-end), "confirm" (publisher confirms).
	Latency map[string]*Latency `json:"latency,omitempty"`
}

// Counts are exact: every operation the tool attempted is in Operations or
// in one of Errors.
type Counts struct {
	// Operations completed successfully (requests answered, records
	// acknowledged, messages received).
	Operations int64 `json:"operations"`
	// Bytes of payload in those operations.
	Bytes int64 `json:"bytes"`
	// Errors are failed operations by kind (an exception class, a reply
	// prefix); absent when there were none.
	Errors map[string]int64 `json:"errors,omitempty"`
}

// Failed is the number of failed operations of every kind.
func (c Counts) Failed() int64 {
	var n int64
	for _, v := range c.Errors {
		n += v
	}
	return n
}

// Interval is one reporting window.
type Interval struct {
	// EndSeconds is the window's end, seconds after the test's start.
	EndSeconds      float64 `json:"end_seconds"`
	DurationSeconds float64 `json:"duration_seconds"`
	Operations      int64   `json:"operations"`
	Bytes           int64   `json:"bytes,omitempty"`
}

// Latency is one latency histogram and a summary of it.
type Latency struct {
	Unit  string  `json:"unit"` // always "us": microseconds
	Count int64   `json:"count"`
	Min   int64   `json:"min"`
	Max   int64   `json:"max"`
	Mean  float64 `json:"mean"`
	// Percentiles maps "50", "90", "99", "99.9" ... to values in Unit.
	Percentiles map[string]int64 `json:"percentiles"`
	// Histogram is the whole histogram in HdrHistogram's V2 compressed
	// encoding (base64), which HdrHistogram libraries in every language
	// decode and merge.
	Histogram string `json:"histogram"`
}

// summaryPercentiles are the percentiles every Latency lists.
var summaryPercentiles = []struct {
	key string
	p   float64
}{{"50", 50}, {"75", 75}, {"90", 90}, {"95", 95}, {"99", 99}, {"99.9", 99.9}, {"99.99", 99.99}, {"100", 100}}

// LatencyOf summarises and encodes a snapshot whose values are microseconds.
func LatencyOf(s *latency.Snapshot) (*Latency, error) {
	enc, err := s.Encode()
	if err != nil {
		return nil, err
	}
	l := &Latency{Unit: "us", Count: s.TotalCount(), Histogram: enc, Percentiles: map[string]int64{}}
	if l.Count > 0 {
		l.Min, l.Max, l.Mean = s.Min(), s.Max(), s.Mean()
		for _, p := range summaryPercentiles {
			l.Percentiles[p.key] = s.ValueAtPercentile(p.p)
		}
	}
	return l, nil
}

// New starts the record of a run now.
func New(tool, release string, args []string) *Run {
	host, _ := os.Hostname()
	return &Run{Schema: Schema, Tool: tool, Release: release, Args: append([]string{}, args...), Host: host,
		Start: time.Now(), Tests: []Test{}}
}

// Finish stamps the end of the run and how it ended.
func (r *Run) Finish(ending string, exitCode int, err error) {
	r.End = time.Now()
	r.Ending = ending
	r.ExitCode = exitCode
	if err != nil {
		r.Error = err.Error()
	}
}

// Marshal is the JSON text of the run.
func (r *Run) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteFile writes the run to path, atomically (a reader never sees half a
// file), creating the file's directory if needed.
func (r *Run) WriteFile(path string) error {
	b, err := r.Marshal()
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := fmt.Sprintf("%s.tmp.%d", path, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Read loads a result file.
func Read(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, Schema)
	}
	return &r, nil
}

// Save writes the run to the file PERFCLONES_RESULT names, if it names
// one. A file that cannot be written is one line on stderr (the original
// printed nothing of the kind, and stdout stays the original's).
func (r *Run) Save(getenv func(string) string, stderr io.Writer) {
	path := getenv(Env)
	if path == "" {
		return
	}
	if err := r.WriteFile(path); err != nil {
		fmt.Fprintf(stderr, "perfclones: cannot write the result file: %v\n", err)
	}
}
