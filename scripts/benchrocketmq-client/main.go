// Command benchrocketmq-client is a bare rocketmq-client-go producer for
// scripts/bench-rocketmq: W goroutines sending Q messages of S bytes with
// SendSync, the client's settings as rocketmq-benchmark sets them, and no
// reporting, so its CPU per message is the library's own floor.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

func main() {
	namesrv := flag.String("n", "", "name servers, ;-separated")
	topic := flag.String("t", "topic-01", "topic")
	workers := flag.Int("w", 64, "goroutines")
	size := flag.Int("s", 1024, "message size")
	quantity := flag.Int64("q", 200000, "messages")
	flag.Parse()
	rlog.SetLogLevel("fatal")
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // as rocketmq-benchmark sets it
	}
	p, err := rocketmq.NewProducer(
		producer.WithNameServer(strings.Split(*namesrv, ";")),
		producer.WithGroupName("bench_client"),
		producer.WithSendMsgTimeout(3*time.Second),
		producer.WithRetry(2),
		producer.WithCompressMsgBodyOverHowmuch(math.MaxInt32),
	)
	if err == nil {
		err = p.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	body := []byte(strings.Repeat("x", *size))
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < *workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= *quantity {
				if _, err := p.SendSync(context.Background(), primitive.NewMessage(*topic, body)); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	_ = p.Shutdown()
	fmt.Printf("sent %d failed %d in %.2f s: %d msg/s\n", *quantity-failed.Load(), failed.Load(), secs, int64(float64(*quantity)/secs))
}
