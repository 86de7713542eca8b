package kafkaperf

import (
	"math/rand/v2"
	"sync"

	"github.com/IBM/sarama"
)

// stickyPartitioner places records as the Java producer's default
// partitioner does: a keyed record goes to murmur2(key) modulo the partition
// count; records without a key stick to one partition until a batch's worth
// (batch.size bytes) has gone there, then move to another partition (KIP-480).
// Spreading keyless records one by one instead would leave every partition's
// batch partly empty and halve the records per request.
type stickyPartitioner struct {
	batchBytes int

	mu      sync.Mutex
	current int32
	filled  int
	rng     *rand.Rand
}

func newStickyPartitioner(batchBytes int, seed uint64) sarama.PartitionerConstructor {
	return func(string) sarama.Partitioner {
		return &stickyPartitioner{batchBytes: max(batchBytes, 1), current: -1, rng: rand.New(rand.NewPCG(seed, 2))}
	}
}

func (p *stickyPartitioner) Partition(msg *sarama.ProducerMessage, n int32) (int32, error) {
	if msg.Key != nil {
		key, err := msg.Key.Encode()
		if err != nil {
			return -1, err
		}
		return int32(murmur2(key)&0x7fffffff) % n, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.current < 0 || p.current >= n || p.filled >= p.batchBytes {
		next := p.rng.Int32N(n)
		if n > 1 && next == p.current {
			next = (next + 1 + p.rng.Int32N(n-1)) % n
		}
		p.current, p.filled = next, 0
	}
	if msg.Value != nil {
		p.filled += msg.Value.Length()
	}
	return p.current, nil
}

// RequiresConsistency is false: a keyless record may go to any partition.
func (p *stickyPartitioner) RequiresConsistency() bool { return false }

// murmur2 is the Kafka Java client's hash of record keys (Utils.murmur2).
func murmur2(data []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	length := len(data)
	h := uint32(seed) ^ uint32(length)
	i := 0
	for ; i+4 <= length; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch length - i {
	case 3:
		h ^= uint32(data[i+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[i+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[i])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
