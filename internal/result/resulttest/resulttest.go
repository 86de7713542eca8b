// Package resulttest checks result files in tests: against the JSON Schema
// and against the lines the tool printed.
package resulttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/perfclones/perfclones/internal/latency"
	"github.com/perfclones/perfclones/internal/result"
)

var (
	compileOnce sync.Once
	compiled    *jsonschema.Schema
	compileErr  error
)

func schema() (*jsonschema.Schema, error) {
	compileOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(result.SchemaJSON))
		if err != nil {
			compileErr = err
			return
		}
		c := jsonschema.NewCompiler()
		const url = "schema.json"
		if err := c.AddResource(url, doc); err != nil {
			compileErr = err
			return
		}
		compiled, compileErr = c.Compile(url)
	})
	return compiled, compileErr
}

// Validate checks a result file's bytes against schema.json and decodes it.
// Each latency histogram must decode and hold as many values as its count.
func Validate(b []byte) (*result.Run, error) {
	s, err := schema()
	if err != nil {
		return nil, fmt.Errorf("schema.json: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if err := s.Validate(doc); err != nil {
		return nil, err
	}
	var r result.Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	for _, t := range r.Tests {
		for name, l := range t.Latency {
			snap, err := latency.Decode(l.Histogram)
			if err != nil {
				return nil, fmt.Errorf("test %s latency %s: %w", t.Name, name, err)
			}
			if snap.TotalCount() != l.Count {
				return nil, fmt.Errorf("test %s latency %s: histogram holds %d values, count says %d", t.Name, name, snap.TotalCount(), l.Count)
			}
		}
	}
	return &r, nil
}

// Histogram decodes one latency's histogram.
func Histogram(l *result.Latency) (*latency.Snapshot, error) { return latency.Decode(l.Histogram) }
