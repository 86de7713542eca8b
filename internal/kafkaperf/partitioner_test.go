package kafkaperf

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
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

// TestJavaPartitioner: keyed records go where Java's murmur2 puts them
// (unless keys are ignored); keyless ones stick to a partition for
// batch.size bytes, then move to another.
func TestJavaPartitioner(t *testing.T) {
	for _, tt := range []struct {
		name       string
		ignoreKeys bool
	}{{"keys hashed", false}, {"keys ignored", true}} {
		t.Run(tt.name, func(t *testing.T) {
			tp := javaPartitioner(3000, false, tt.ignoreKeys, false).ForTopic("t")
			p, ok := tp.(kgo.TopicBackupPartitioner)
			if !ok {
				t.Fatal("the uniform bytes partitioner partitions by backlog")
			}
			partition := func(r *kgo.Record) int { return p.PartitionByBackup(r, 3, &evenBacklog{n: 3}) }
			value := make([]byte, 1000)
			var seq []int
			used := map[int]bool{}
			for range 300 {
				part := partition(&kgo.Record{Value: value})
				seq = append(seq, part)
				used[part] = true
			}
			// About 3000 bytes per partition: the first two records share one.
			if seq[0] != seq[1] || len(used) != 3 {
				t.Errorf("keyless records should stick to a partition for batch.size bytes, then move on: %v", seq[:12])
			}
			r := &kgo.Record{Key: []byte("abc"), Value: value}
			if got := p.RequiresConsistency(r); got == tt.ignoreKeys {
				t.Errorf("RequiresConsistency(keyed) = %v with ignoreKeys %v", got, tt.ignoreKeys)
			}
			if !tt.ignoreKeys {
				if part := partition(r); part != int(479470107%3) {
					t.Errorf("keyed record went to %d, want murmur2 %% 3 = %d", part, 479470107%3)
				}
			}
		})
	}
}

// evenBacklog is a backlog of no records on each of n partitions.
type evenBacklog struct{ i, n int }

func (b *evenBacklog) Next() (int, int64) { b.i++; return b.i - 1, 0 }
func (b *evenBacklog) Rem() int           { return b.n - b.i }
