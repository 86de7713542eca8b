package kafkaperf

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfclones/perfclones/internal/javaprops"
	"github.com/perfclones/perfclones/internal/testenv"
)

// fakeBroker accepts one connection, reports each request's API key and
// correlation id, and answers a request when told its correlation id.
type fakeBroker struct {
	addr     string
	requests chan [2]int32 // API key, correlation id
	answer   chan int32
}

func startFakeBroker(t *testing.T, tlsCfg *tls.Config) *fakeBroker {
	t.Helper()
	var l net.Listener
	var err error
	if tlsCfg != nil {
		l, err = tls.Listen("tcp", "127.0.0.1:0", tlsCfg)
	} else {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBroker{addr: l.Addr().String(), requests: make(chan [2]int32, 16), answer: make(chan int32, 16)}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); close(done); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bufio.NewReader(c)
			hdr := make([]byte, requestHeaderLen)
			for {
				if _, err := io.ReadFull(r, hdr); err != nil {
					return
				}
				size := int(binary.BigEndian.Uint32(hdr))
				if _, err := io.CopyN(io.Discard, r, int64(size-(requestHeaderLen-4))); err != nil {
					return
				}
				b.requests <- [2]int32{int32(binary.BigEndian.Uint16(hdr[4:])), int32(binary.BigEndian.Uint32(hdr[8:]))}
			}
		}()
		for {
			select {
			case corr := <-b.answer:
				// An answer with a body of 5 bytes, written in pieces so
				// the client's reads split the header.
				msg := binary.BigEndian.AppendUint32(nil, 4+5)
				msg = binary.BigEndian.AppendUint32(msg, uint32(corr))
				msg = append(msg, "abcde"...)
				for _, piece := range [][]byte{msg[:3], msg[3:6], msg[6:]} {
					if _, err := c.Write(piece); err != nil {
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			case <-done:
				return
			}
		}
	}()
	return b
}

// request is a Kafka request frame with a 20-byte body.
func request(key int16, corr int32) []byte {
	msg := binary.BigEndian.AppendUint32(nil, 8+20)
	msg = binary.BigEndian.AppendUint16(msg, uint16(key))
	msg = binary.BigEndian.AppendUint16(msg, 9)
	msg = binary.BigEndian.AppendUint32(msg, uint32(corr))
	return append(msg, make([]byte, 20)...)
}

// serverTLS is a self-signed certificate for 127.0.0.1 and a client
// configuration trusting it (without a server name: the dialer must take
// it from the address).
func serverTLS(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}},
		&tls.Config{RootCAs: pool}
}

// TestProduceLimiterFraming drives a limited connection by hand, in plain
// TCP and in TLS: produce requests past the limit wait for an answer,
// others do not, and a wait ends as a timed-out write when the write
// deadline passes and as a write on a closed connection on Close.
func TestProduceLimiterFraming(t *testing.T) {
	for _, withTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", withTLS), func(t *testing.T) {
			var srvCfg, cliCfg *tls.Config
			if withTLS {
				srvCfg, cliCfg = serverTLS(t)
			}
			b := startFakeBroker(t, srvCfg)
			lim := newProduceLimiter(2, time.Second, cliCfg)
			conn, err := lim.dial(context.Background(), "tcp", b.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// The client's reader, as franz-go's: small buffered reads.
			answers := make(chan int32, 16)
			go func() {
				r := bufio.NewReaderSize(conn, 16)
				hdr := make([]byte, responseHeaderLen)
				for {
					if _, err := io.ReadFull(r, hdr); err != nil {
						return
					}
					if _, err := io.CopyN(io.Discard, r, int64(binary.BigEndian.Uint32(hdr)-4)); err != nil {
						return
					}
					answers <- int32(binary.BigEndian.Uint32(hdr[4:]))
				}
			}()
			received := func(want [2]int32) {
				t.Helper()
				select {
				case got := <-b.requests:
					if got != want {
						t.Fatalf("broker received key/correlation %v, want %v", got, want)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("broker did not receive %v", want)
				}
			}
			nothingReceived := func() {
				t.Helper()
				select {
				case got := <-b.requests:
					t.Fatalf("broker received %v while the write should wait", got)
				case <-time.After(100 * time.Millisecond):
				}
			}
			write := func(msg []byte) error {
				n, err := conn.Write(msg)
				if err == nil && n != len(msg) {
					err = fmt.Errorf("short write %d of %d", n, len(msg))
				}
				return err
			}

			// Two produce requests and a metadata request in one write go
			// at once.
			if err := write(append(append(request(0, 0), request(0, 1)...), request(3, 2)...)); err != nil {
				t.Fatal(err)
			}
			received([2]int32{0, 0})
			received([2]int32{0, 1})
			received([2]int32{3, 2})

			// A third produce request waits and times out at the write
			// deadline, writing nothing.
			conn.SetWriteDeadline(time.Now().Add(150 * time.Millisecond))
			start := time.Now()
			n, err := conn.Write(request(0, 3))
			var ne net.Error
			if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("write past the limit: %d bytes, %v; want 0 bytes and a timeout", n, err)
			}
			if waited := time.Since(start); waited < 100*time.Millisecond {
				t.Errorf("the write failed after %v, before its deadline", waited)
			}
			conn.SetWriteDeadline(time.Time{})
			nothingReceived()

			// Without a deadline it waits for an answer, which is read in
			// pieces.
			done := make(chan error, 1)
			go func() { done <- write(request(0, 4)) }()
			nothingReceived()
			b.answer <- 1 // answers are matched by correlation id
			if got := <-answers; got != 1 {
				t.Fatalf("answer %d, want 1", got)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			received([2]int32{0, 4})

			// A deadline set while a write waits (franz-go's context
			// cancellation) ends the wait.
			go func() { done <- write(request(0, 5)) }()
			nothingReceived()
			conn.SetWriteDeadline(time.Now())
			if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("write after a deadline of now: %v, want a timeout", err)
			}
			conn.SetWriteDeadline(time.Time{})

			// Close ends a waiting write.
			go func() { done <- write(request(0, 6)) }()
			nothingReceived()
			conn.Close()
			if err := <-done; !errors.Is(err, net.ErrClosed) {
				t.Fatalf("write waiting at Close: %v, want net.ErrClosed", err)
			}
			if most, held := lim.mostInFlight.Load(), lim.held.Load(); most != 2 || held != 4 {
				t.Errorf("at most %d produce requests in flight, %d writes held; want 2 and 4", most, held)
			}
		})
	}
}

// TestProduceLimiterOnBroker produces through the producer's options on
// the local broker: with idempotence and max.in.flight.requests.per.connection
// below 5 the connections keep that many produce requests in flight at
// most, and every record is acknowledged; otherwise no limiter is installed.
func TestProduceLimiterOnBroker(t *testing.T) {
	env := testenv.Kafka(t)
	adm, err := kgo.NewClient(kgo.SeedBrokers(env.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	admin := kadm.NewClient(adm)
	topic := fmt.Sprintf("inflight-limiter-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.CreateTopic(ctx, 3, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	defer admin.DeleteTopics(context.Background(), topic)

	tests := []struct {
		name  string
		props map[string]string
		limit int // 0: no limiter
	}{
		{"one with idempotence", map[string]string{"max.in.flight.requests.per.connection": "1"}, 1},
		{"three with idempotence", map[string]string{"max.in.flight.requests.per.connection": "3"}, 3},
		{"five with idempotence", map[string]string{"max.in.flight.requests.per.connection": "5"}, 0},
		{"the default", nil, 0},
		{"two without idempotence", map[string]string{"max.in.flight.requests.per.connection": "2", "enable.idempotence": "false"}, 0},
		{"two with acks=1", map[string]string{"max.in.flight.requests.per.connection": "2", "acks": "1"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := javaprops.New()
			p.Set("bootstrap.servers", env.Bootstrap)
			p.Set("batch.size", "1024")
			for k, v := range tt.props {
				p.Set(k, v)
			}
			s, err := newClientSettings(producerClient, p, func() string { return "T" })
			if err != nil {
				t.Fatal(err)
			}
			pc := &producerPlan{}
			if err := s.applyProducer(pc, 100, &kafka44.producer); err != nil {
				t.Fatal(err)
			}
			if (s.produceLimiter != nil) != (tt.limit > 0) || s.produceLimiter != nil && s.produceLimiter.limit != tt.limit {
				t.Fatalf("limiter %+v, want a limit of %d (0: none)", s.produceLimiter, tt.limit)
			}
			if tt.limit == 0 {
				return
			}
			pc.client, pc.topic = s, topic
			cl, err := kgo.NewClient(pc.producerClientOptions()...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			const n = 20000
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failed []error
			value := make([]byte, 100)
			wg.Add(n)
			for i := range n {
				cl.Produce(context.Background(), &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						mu.Lock()
						failed = append(failed, err)
						mu.Unlock()
					}
					wg.Done()
				})
			}
			wg.Wait()
			if len(failed) > 0 {
				t.Fatalf("%d of %d records failed, the first: %v", len(failed), n, failed[0])
			}
			most, held := s.produceLimiter.mostInFlight.Load(), s.produceLimiter.held.Load()
			t.Logf("at most %d produce requests in flight on a connection, %d writes held", most, held)
			if most != int64(tt.limit) || held == 0 {
				t.Errorf("at most %d in flight (%d writes held), want %d reached and writes held", most, held, tt.limit)
			}
		})
	}
}
