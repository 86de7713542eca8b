// Command benchkafka-franz is scripts/bench-kafka's franz-go producer: the
// records of kafka-producer-perf-test --record-size N --throughput -1 (random
// A-Z values, null keys) sent with a bare github.com/twmb/franz-go client,
// with the Java 4.x producer's settings mapped onto franz-go: the client's
// own cost, without the tool around it. It is a measuring aid only, in a
// module of its own; it prints the original's final line:
//
//	N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, ...
//
// Timing as in ProducerPerformance: from after the client is built (the
// first send waits for metadata) until close returns.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "bootstrap.servers, comma-separated")
	topic := flag.String("topic", "", "topic")
	numRecords := flag.Int("num-records", 0, "records to send")
	recordSize := flag.Int("record-size", 1024, "value size in bytes")
	acks := flag.String("acks", "all", "acks: all, -1, 1 or 0")
	batchSize := flag.Int("batch-size", 16384, "batch.size: ProducerBatchMaxBytes (at least one record), and the bytes per partition of the uniform sticky partitioner")
	lingerMs := flag.Int("linger-ms", 5, "linger.ms (Java 4.x default 5)")
	inflight := flag.Int("max-in-flight", 5, "max.in.flight.requests.per.connection (without idempotence; with it franz-go allows 5)")
	bufferMemory := flag.Int64("buffer-memory", 33554432, "buffer.memory: bytes of records buffered before produce blocks")
	flag.Parse()
	if *topic == "" || *numRecords <= 0 || *recordSize <= 0 {
		fmt.Fprintln(os.Stderr, "usage: benchkafka-franz -bootstrap HOST:PORT -topic T -num-records N [-record-size B] [-acks all|1|0] [-batch-size B] [-linger-ms MS]")
		os.Exit(2)
	}

	// Java makes a batch for a record larger than batch.size big enough for
	// that one record; franz-go's batch limit is hard, so allow one record
	// with its batch and record overheads (61 + at most 21 bytes without key
	// or headers): with batch.size < record size every batch holds one record,
	// as in Java.
	maxBatch := max(*batchSize, *recordSize+128)
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(*bootstrap, ",")...),
		kgo.ClientID("perf-producer-client"),
		kgo.DefaultProduceTopic(*topic),
		kgo.ProducerBatchMaxBytes(int32(maxBatch)),
		kgo.ProducerLinger(time.Duration(*lingerMs) * time.Millisecond),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedBytes(int(*bufferMemory)),
		kgo.MaxBufferedRecords(1 << 30), // bounded by bytes, as Java's buffer.memory
		// Java's default partitioner for null keys: uniform sticky, switching
		// partition after batch.size bytes, adaptive to slow brokers.
		kgo.RecordPartitioner(kgo.UniformBytesPartitioner(*batchSize, true, true, nil)),
	}
	switch *acks {
	case "all", "-1":
		// Idempotent, as Java's default with acks=all; franz-go then keeps up
		// to 5 requests in flight per broker by itself (Java: 5 too).
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
			kgo.MaxProduceRequestsInflightPerBroker(*inflight))
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite(),
			kgo.MaxProduceRequestsInflightPerBroker(*inflight))
	default:
		fmt.Fprintf(os.Stderr, "bad -acks %q\n", *acks)
		os.Exit(2)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "franz-go:", err)
		os.Exit(1)
	}

	// Values: windows at random offsets into one block of random letters,
	// as our clone makes them (never rewritten while the records are queued).
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	const blockSize = 4 << 20
	block := make([]byte, blockSize+*recordSize)
	for i := range block {
		block[i] = byte('A' + rng.IntN(26))
	}

	var (
		mu        sync.Mutex
		latencies = make([]int64, 0, *numRecords)
		failed    int
		firstErr  error
	)
	ctx := context.Background()
	start := time.Now()
	for i := 0; i < *numRecords; i++ {
		off := rng.IntN(blockSize)
		r := &kgo.Record{Value: block[off : off+*recordSize : off+*recordSize]}
		sent := time.Now()
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			lat := time.Since(sent).Milliseconds()
			mu.Lock()
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
			} else {
				latencies = append(latencies, lat)
			}
			mu.Unlock()
		})
	}
	if err := cl.Flush(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "franz-go flush:", err)
	}
	cl.Close()
	elapsed := time.Since(start)

	mu.Lock()
	defer mu.Unlock()
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "%d records failed; first error: %v\n", failed, firstErr)
	}
	n := len(latencies)
	if n == 0 {
		fmt.Fprintln(os.Stderr, "no record was acknowledged")
		os.Exit(1)
	}
	ms := float64(elapsed.Microseconds()) / 1000
	var sum, maxLat int64
	for _, l := range latencies {
		sum += l
		maxLat = max(maxLat, l)
	}
	slices.Sort(latencies)
	pct := func(p float64) int64 { return latencies[min(int(p*float64(n)), n-1)] }
	fmt.Printf("%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.\n",
		n, 1000*float64(n)/ms, 1000*float64(n)*float64(*recordSize)/(1024*1024)/ms,
		float64(sum)/float64(n), float64(maxLat), pct(0.5), pct(0.95), pct(0.99), pct(0.999))
	if failed > 0 {
		os.Exit(1)
	}
}
