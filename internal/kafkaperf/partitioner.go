package kafkaperf

import "github.com/twmb/franz-go/pkg/kgo"

// javaPartitioner places records as the Java producer's built-in
// partitioner does (KIP-794, Kafka 3.3+): a keyed record goes to
// murmur2(key) modulo the partition count unless partitioner.ignore.keys is
// set; records without a key (or with keys ignored) stick to one partition
// until batch.size bytes have gone there, then move on, preferring the
// partitions with the least backlog when partitioner.adaptive.partitioning.enable
// is on (the default). partitioner.class=...RoundRobinPartitioner sends each
// record to the next partition, keys ignored, as Java's does.
func javaPartitioner(batchBytes int, adaptive, ignoreKeys, roundRobin bool) kgo.Partitioner {
	if roundRobin {
		return kgo.RoundRobinPartitioner()
	}
	return kgo.UniformBytesPartitioner(max(batchBytes, 1), adaptive, !ignoreKeys, kgo.KafkaHasher(murmur2))
}

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
