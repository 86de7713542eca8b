package latency

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Encode returns the snapshot in HdrHistogram's V2 compressed encoding,
// base64 text: the form every HdrHistogram implementation (Java, C, Go,
// Python, JavaScript) decodes, so a result file's histogram can be read and
// merged by tools outside this module.
func (s *Snapshot) Encode() (string, error) {
	h := hdrhistogram.Import(&hdrhistogram.Snapshot{
		LowestTrackableValue:  s.lowest,
		HighestTrackableValue: s.highest,
		SignificantFigures:    int64(s.sigFigs),
		Counts:                s.counts,
	})
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("latency: encode: %w", err)
	}
	return string(b), nil
}

// Decode reads what Encode wrote back into a snapshot (for merging result
// files and for tests).
func Decode(encoded string) (*Snapshot, error) {
	h, err := hdrhistogram.Decode([]byte(encoded))
	if err != nil {
		return nil, fmt.Errorf("latency: decode: %w", err)
	}
	exp := h.Export()
	lowest, highest, sig := exp.LowestTrackableValue, exp.HighestTrackableValue, int(exp.SignificantFigures)
	out := New(lowest, highest, sig)
	if n := len(exp.Counts); n != int(out.geo.countsLen) {
		return nil, fmt.Errorf("latency: decode: %d counts for a (%d, %d, %d) histogram, expected %d", n, lowest, highest, sig, out.geo.countsLen)
	}
	s := &Snapshot{lowest: out.lowest, highest: out.highest, sigFigs: out.sigFigs, geo: out.geo, counts: exp.Counts}
	for i, c := range exp.Counts {
		s.total += c
		if c != 0 {
			s.max = out.geo.valueAtIndex(int32(i))
		}
	}
	return s, nil
}
