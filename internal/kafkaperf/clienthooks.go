package kafkaperf

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientHooks measure the client's requests for --print-metrics, from
// franz-go's hooks: what the Java client's producer-metrics and
// consumer-fetch-manager-metrics measure under the same names.
type clientHooks struct {
	requests, responses      atomic.Int64 // written, and read back
	outgoingBytes, inBytes   atomic.Int64
	produceRequests          atomic.Int64
	produceLatencyNs, maxLat atomic.Int64 // of produce requests answered
	produceAnswered          atomic.Int64

	mu                          sync.Mutex
	batches, batchRecords       int64
	batchBytes, batchMax        int64 // as written (compressed)
	uncompressedBytes, compBats int64
}

var (
	_ kgo.HookBrokerE2E           = (*clientHooks)(nil)
	_ kgo.HookProduceBatchWritten = (*clientHooks)(nil)
)

// produceKey is the Produce API's key.
const produceKey = 0

func (h *clientHooks) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	h.requests.Add(1)
	h.outgoingBytes.Add(int64(e.BytesWritten))
	if key == produceKey {
		h.produceRequests.Add(1)
	}
	if e.Err() != nil || e.BytesRead == 0 {
		return
	}
	h.responses.Add(1)
	h.inBytes.Add(int64(e.BytesRead))
	if key == produceKey {
		ns := e.DurationE2E().Nanoseconds()
		h.produceAnswered.Add(1)
		h.produceLatencyNs.Add(ns)
		if ns > h.maxLat.Load() {
			h.maxLat.Store(ns)
		}
	}
}

func (h *clientHooks) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.batches++
	h.batchRecords += int64(m.NumRecords)
	h.batchBytes += int64(m.CompressedBytes)
	h.batchMax = max(h.batchMax, int64(m.CompressedBytes))
	if m.UncompressedBytes > 0 {
		h.uncompressedBytes += int64(m.UncompressedBytes)
		h.compBats += int64(m.CompressedBytes)
	}
}

// hookSnapshot is what the hooks measured by the end of a run.
type hookSnapshot struct {
	requests, responses, outgoingBytes, incomingBytes int64
	produceRequests                                   int64
	requestLatencyAvgMs, requestLatencyMaxMs          float64
	batches, batchRecords                             int64
	batchSizeAvg, batchSizeMax                        float64
	compressionRate                                   float64 // compressed / uncompressed; 0 when nothing was written
	elapsed                                           time.Duration
}

func (h *clientHooks) snapshot(elapsed time.Duration) hookSnapshot {
	s := hookSnapshot{
		requests: h.requests.Load(), responses: h.responses.Load(),
		outgoingBytes: h.outgoingBytes.Load(), incomingBytes: h.inBytes.Load(),
		produceRequests: h.produceRequests.Load(), elapsed: elapsed,
	}
	if n := h.produceAnswered.Load(); n > 0 {
		s.requestLatencyAvgMs = float64(h.produceLatencyNs.Load()) / float64(n) / 1e6
		s.requestLatencyMaxMs = float64(h.maxLat.Load()) / 1e6
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s.batches, s.batchRecords = h.batches, h.batchRecords
	if h.batches > 0 {
		s.batchSizeAvg = float64(h.batchBytes) / float64(h.batches)
		s.batchSizeMax = float64(h.batchMax)
	}
	if h.uncompressedBytes > 0 {
		s.compressionRate = float64(h.compBats) / float64(h.uncompressedBytes)
	}
	return s
}
