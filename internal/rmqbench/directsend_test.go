package rmqbench

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// fakeRemoting is a name server and a broker in one listener: route
// requests get a route to itself, send requests what answer says.
type fakeRemoting struct {
	ln          net.Listener
	answer      func(req *remotingReply) (code int, ok bool) // ok false: no reply
	closeOnSend bool

	mu    sync.Mutex
	sends []*remotingReply
	conns atomic.Int32
}

func newFakeRemoting(t *testing.T, answer func(*remotingReply) (int, bool)) *fakeRemoting {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRemoting{ln: ln, answer: answer}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.conns.Add(1)
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeRemoting) addr() string { return f.ln.Addr().String() }

func replyFrame(code int, opaque int32, ext map[string]string, body []byte) []byte {
	h, _ := json.Marshal(map[string]any{"code": code, "flag": 1, "opaque": opaque, "language": "JAVA", "extFields": ext, "remark": fmt.Sprintf("code %d", code)})
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(h)+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(h)))
	return append(append(b, h...), body...)
}

func (f *fakeRemoting) serve(c net.Conn) {
	defer c.Close()
	var mu sync.Mutex
	for {
		var word [4]byte
		if _, err := io.ReadFull(c, word[:]); err != nil {
			return
		}
		buf := make([]byte, binary.BigEndian.Uint32(word[:]))
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		req, err := decodeFrame(buf)
		if err != nil {
			return
		}
		var out []byte
		switch req.code {
		case codeGetRouteInfoByTopic:
			route := fmt.Sprintf(`{"brokerDatas":[{"brokerAddrs":{0:"%s"},"brokerName":"fake"}],"queueDatas":[{"brokerName":"fake","perm":6,"writeQueueNums":2}]}`, f.addr())
			out = replyFrame(0, req.opaque, nil, []byte(route))
		case codeSendMessageV2:
			f.mu.Lock()
			f.sends = append(f.sends, req)
			f.mu.Unlock()
			if f.closeOnSend {
				return
			}
			code, ok := f.answer(req)
			if !ok {
				continue
			}
			out = replyFrame(code, req.opaque, map[string]string{"queueId": req.ext["e"], "queueOffset": "77", "msgId": "OFFSETID"}, nil)
		default:
			return
		}
		mu.Lock()
		_, err = c.Write(out)
		mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (f *fakeRemoting) sent() []*remotingReply {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*remotingReply(nil), f.sends...)
}

func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// TestDirectProducer sends through the fake and checks what each broker
// answer comes to: the result, the original's counter (classify), and
// how many tries went out.
func TestDirectProducer(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name        string
		code        int  // the broker's answer
		silent      bool // no answer
		closeOnSend bool
		namesrvDown bool
		status      primitive.SendStatus
		outcome     sendOutcome
		tries       int
	}{
		{name: "stored", code: respSuccess, status: primitive.SendOK, outcome: sent, tries: 1},
		{name: "flush disk timeout is a status", code: respFlushDiskTimeout, status: primitive.SendFlushDiskTimeout, outcome: sent, tries: 1},
		{name: "slave not available is a status", code: respSlaveNotAvailable, status: primitive.SendSlaveNotAvailable, outcome: sent, tries: 1},
		{name: "SYSTEM_BUSY: response failed, no retry", code: 2, outcome: responseFailed, tries: 1},
		{name: "SYSTEM_ERROR: retried twice", code: respSystemError, outcome: responseFailed, tries: 3},
		{name: "no permission: retried twice", code: respNoPermission, outcome: responseFailed, tries: 3},
		{name: "no answer: timeout, no retry", silent: true, outcome: sendFailedPause, tries: 1},
		{name: "connection closed: retried", closeOnSend: true, outcome: sendFailedPause, tries: 3},
		{name: "name server down", namesrvDown: true, outcome: sendFailedNow, tries: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRemoting(t, func(*remotingReply) (int, bool) { return tc.code, !tc.silent })
			f.closeOnSend = tc.closeOnSend
			ns := f.addr()
			if tc.namesrvDown {
				ns = closedAddr(t)
			}
			p := newDirectProducer([]string{ns}, producerGroup, credentials{})
			p.timeout = timeout
			defer p.Close()
			msg := primitive.NewMessage("topic-x", []byte("hello"))
			msg.WithTag("tag3")
			begin := time.Now()
			res, err := p.SendSync(context.Background(), msg)
			took := time.Since(begin)
			if got := classify(err); got != tc.outcome {
				t.Errorf("classify(%v) = %d, want %d", err, got, tc.outcome)
			}
			if tc.outcome == sent && (res == nil || res.Status != tc.status || res.OffsetMsgID != "OFFSETID" || res.QueueOffset != 77 || len(res.MsgID) != 32) {
				t.Errorf("result %+v, want status %d", res, tc.status)
			}
			if n := len(f.sent()); n != tc.tries {
				t.Errorf("%d tries reached the broker, want %d", n, tc.tries)
			}
			if tc.silent && (took < timeout || took > timeout+time.Second) {
				t.Errorf("a send with no answer took %s, the timeout is %s", took, timeout)
			}
			if tc.tries > 0 {
				req := f.sent()[0]
				if req.serialize != serializeBinary || req.ext["a"] != producerGroup || req.ext["b"] != "topic-x" ||
					!strings.Contains(req.ext["i"], "TAGS\x01tag3\x02") || !strings.Contains(req.ext["i"], "UNIQ_KEY\x01") ||
					string(req.body) != "hello" || req.ext["AccessKey"] != "" {
					t.Errorf("request %+v body %q", req, req.body)
				}
			}
		})
	}
}

// TestDirectProducerRoundRobin sends sequentially: the queues take turns.
func TestDirectProducerRoundRobin(t *testing.T) {
	f := newFakeRemoting(t, func(*remotingReply) (int, bool) { return 0, true })
	p := newDirectProducer([]string{f.addr()}, producerGroup, credentials{})
	defer p.Close()
	for i := 0; i < 6; i++ {
		if _, err := p.SendSync(context.Background(), primitive.NewMessage("t", []byte("x"))); err != nil {
			t.Fatal(err)
		}
	}
	var order []string
	for _, r := range f.sent() {
		order = append(order, r.ext["e"])
	}
	if s := strings.Join(order, ""); s != "101010" && s != "010101" {
		t.Errorf("queue ids in turn %s", s)
	}
	if n := f.conns.Load(); n != 2 { // one for the route, one to the broker
		t.Errorf("%d connections, want 2", n)
	}
}

// TestDirectProducerRefused: a broker address nobody listens at is a
// refused connection, which the original's counters take as sendRefused.
func TestDirectProducerRefused(t *testing.T) {
	p := newDirectProducer(nil, producerGroup, credentials{})
	defer p.Close()
	q := []writeQueue{{broker: "gone", addr: closedAddr(t), id: 0}}
	p.topic("t").queues.Store(&q)
	_, err := p.SendSync(context.Background(), primitive.NewMessage("t", []byte("x")))
	if classify(err) != sendRefused {
		t.Errorf("classify(%v) = %d, want sendRefused", err, classify(err))
	}
}

// TestDirectProducerAsync: every callback runs once, with the outcome,
// also for sends that time out.
func TestDirectProducerAsync(t *testing.T) {
	var n atomic.Int32
	f := newFakeRemoting(t, func(*remotingReply) (int, bool) { return 0, n.Add(1)%2 == 0 }) // every other one unanswered
	p := newDirectProducer([]string{f.addr()}, producerGroup, credentials{})
	p.timeout = 200 * time.Millisecond
	defer p.Close()
	var wg sync.WaitGroup
	var ok, failed atomic.Int32
	for i := 0; i < 40; i++ {
		wg.Add(1)
		err := p.SendAsync(context.Background(), func(_ context.Context, res *primitive.SendResult, err error) {
			defer wg.Done()
			if err == nil && res.Status == primitive.SendOK {
				ok.Add(1)
			} else if errors.Is(err, errSendTimeout) {
				failed.Add(1)
			}
		}, primitive.NewMessage("t", []byte("x")))
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if ok.Load() != 20 || failed.Load() != 20 {
		t.Errorf("%d stored, %d timed out, want 20 and 20", ok.Load(), failed.Load())
	}
}

// TestDirectProducerSignature checks the ACL fields against a signature
// worked out here from the rule: HMAC-SHA1 of the values in key order
// (AccessKey among them), then the body.
func TestDirectProducerSignature(t *testing.T) {
	p := &directProducer{cred: credentials{enabled: true, accessKey: "rocketmq2", secretKey: "12345678"}}
	f := p.sign([]extField{{"b", "topic"}, {"a", "group"}, {"Z", "upper"}}, []byte("body"))
	mac := hmac.New(sha1.New, []byte("12345678"))
	mac.Write([]byte("rocketmq2" + "upper" + "group" + "topic" + "body")) // AccessKey < Z < a < b
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if len(f) != 5 || f[3] != (extField{"AccessKey", "rocketmq2"}) || f[4] != (extField{"Signature", want}) {
		t.Errorf("signed fields %v, want AccessKey and Signature %s", f, want)
	}
	if off := (&directProducer{}).sign([]extField{{"a", "b"}}, nil); len(off) != 1 {
		t.Errorf("without -a true the fields are %v", off)
	}
}

// TestUniqIDs: 32 upper-case hex digits, distinct.
func TestUniqIDs(t *testing.T) {
	var u uniqIDs
	u.init()
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := u.next()
		if len(id) != 32 || strings.ToUpper(id) != id || seen[id] {
			t.Fatalf("id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
}

// TestDirectProducerNamesrvFailover: a dead first name server is passed
// over, and the next lookup starts at the one that answered.
func TestDirectProducerNamesrvFailover(t *testing.T) {
	f := newFakeRemoting(t, func(*remotingReply) (int, bool) { return 0, true })
	p := newDirectProducer([]string{closedAddr(t), f.addr()}, producerGroup, credentials{})
	defer p.Close()
	if _, err := p.SendSync(context.Background(), primitive.NewMessage("t", []byte("x"))); err != nil {
		t.Fatal(err)
	}
	if at := p.namesrvAt.Load(); at != 1 {
		t.Errorf("the next lookup starts at name server %d, want 1", at)
	}
}
