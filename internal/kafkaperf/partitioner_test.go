package kafkaperf

import (
	"testing"

	"github.com/IBM/sarama"
)

func TestMurmur2(t *testing.T) {
	// Values of the Java client's Utils.murmur2 (its unit test's vectors).
	tests := map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	}
	for in, want := range tests {
		if got := int32(murmur2([]byte(in))); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestStickyPartitioner(t *testing.T) {
	p := newStickyPartitioner(3000, 1)("t")
	value := sarama.ByteEncoder(make([]byte, 1000))
	var seq []int32
	for range 9 {
		part, err := p.Partition(&sarama.ProducerMessage{Value: value}, 3)
		if err != nil {
			t.Fatal(err)
		}
		seq = append(seq, part)
	}
	for i := 0; i < 9; i += 3 {
		if seq[i] != seq[i+1] || seq[i] != seq[i+2] {
			t.Fatalf("batches of 3 records should share a partition: %v", seq)
		}
		if i > 0 && seq[i] == seq[i-1] {
			t.Fatalf("a full batch should move to another partition: %v", seq)
		}
	}
	keyed, _ := p.Partition(&sarama.ProducerMessage{Key: sarama.StringEncoder("abc"), Value: value}, 3)
	if keyed != int32(479470107%3) {
		t.Errorf("keyed record went to %d", keyed)
	}
}
