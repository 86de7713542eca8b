package latency

import "testing"

func TestEncodeDecodeKeepsTheCounts(t *testing.T) {
	h := New(1, 60_000_000, 3)
	for _, v := range []int64{0, 1, 7, 1000, 1001, 59_999_999, 60_000_000, 70_000_000} {
		h.Record(v)
	}
	s := h.Snapshot()
	enc, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if back.TotalCount() != s.TotalCount() || back.Max() != s.Max() || back.Min() != s.Min() || back.Mean() != s.Mean() {
		t.Fatalf("decoded %d/%d/%d/%v, recorded %d/%d/%d/%v", back.TotalCount(), back.Min(), back.Max(), back.Mean(),
			s.TotalCount(), s.Min(), s.Max(), s.Mean())
	}
	for p := 0.0; p <= 100; p += 0.5 {
		if a, b := back.ValueAtPercentile(p), s.ValueAtPercentile(p); a != b {
			t.Fatalf("p%v: %d vs %d", p, a, b)
		}
	}
}

func FuzzDecode(f *testing.F) {
	h := New(1, 3_600_000_000, 3)
	h.Record(12345)
	enc, err := h.Snapshot().Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc)
	f.Add("")
	f.Add("HISTFAAAACx4nJNpmSzMwMDAxQABzFCaEUzOmNZg/wEi0NzIyHRSgAEAUVgD8Q==")
	f.Fuzz(func(t *testing.T, s string) {
		snap, err := Decode(s)
		if err != nil {
			return
		}
		again, err := snap.Encode()
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", s, err)
		}
		back, err := Decode(again)
		if err != nil || back.TotalCount() != snap.TotalCount() || back.Max() != snap.Max() {
			t.Fatalf("re-encoding %q changed it: %v", s, err)
		}
	})
}
