package rmqbench

import (
	"bufio"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	rmqerrors "github.com/apache/rocketmq-client-go/v2/errors"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// directProducer sends single messages over remoting connections of its
// own, one per broker master, with requests pipelined by opaque and the
// frames of all senders written together in one write call. It stands in
// for rocketmq-client-go's producer on the plain producer path: that
// client writes each request in four write calls and with a JSON header
// the broker must parse, which together cost more CPU per message than
// the rest of the run. What it does is what the Java producer does for a
// plain send: the route from the name server (asked again every 30 s),
// round-robin over the writable queues, SEND_MESSAGE_V2, a 3 s timeout,
// and two retries on another broker after a failure.
type directProducer struct {
	namesrv   []string
	group     string
	cred      credentials
	serialize byte
	timeout   time.Duration
	retries   int

	opaque    atomic.Int32
	nextQueue atomic.Uint32 // MQFaultStrategy's sendWhichQueue
	namesrvAt atomic.Int32  // the name server asked first
	uniq      uniqIDs

	mu     sync.Mutex
	topics map[string]*topicQueues
	links  map[string]*brokerLink
	dials  map[string]*linkDial
	closed bool

	done chan struct{}
	wg   sync.WaitGroup
}

// The Java producer's defaults.
const (
	defaultSendTimeout = 3 * time.Second // sendMsgTimeout
	defaultRetries     = 2               // retryTimesWhenSendFailed, retryTimesWhenSendAsyncFailed
	routeRefresh       = 30 * time.Second
	connectTimeout     = 3 * time.Second // connectTimeoutMillis
	namesrvTimeout     = 3 * time.Second
	// defaultTopic and defaultTopicQueues are createTopicKey (TBW102)
	// and defaultTopicQueueNums: a topic the name server does not know
	// is sent on the default topic's route, for the broker to create.
	defaultTopic       = "TBW102"
	defaultTopicQueues = 4
	// sweepEvery is how often requests past their deadline are failed.
	sweepEvery = 50 * time.Millisecond
)

func newDirectProducer(namesrv []string, group string, cred credentials) *directProducer {
	p := &directProducer{
		namesrv: namesrv, group: group, cred: cred,
		serialize: serializeBinary, timeout: defaultSendTimeout, retries: defaultRetries,
		topics: map[string]*topicQueues{}, links: map[string]*brokerLink{}, dials: map[string]*linkDial{},
		done: make(chan struct{}),
	}
	p.uniq.init()
	p.wg.Add(2)
	go p.refreshRoutes()
	go p.sweep()
	return p
}

// Close ends every connection and background task; sends still waiting
// fail.
func (p *directProducer) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	links := make([]*brokerLink, 0, len(p.links))
	for _, l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	close(p.done)
	for _, l := range links {
		l.fail(errProducerClosed)
	}
	p.wg.Wait()
}

var (
	errProducerClosed = errors.New("producer closed")
	errSendTimeout    = errors.New("send request timed out")
	errBatch          = errors.New("the direct sender sends one message at a time")
)

// ---- routes ---------------------------------------------------------------

// topicQueues are a topic's writable queues, fetched on first use.
type topicQueues struct {
	fetch  sync.Mutex // one name server request at a time
	queues atomic.Pointer[[]writeQueue]
}

func (p *directProducer) topic(name string) *topicQueues {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.topics[name]
	if t == nil {
		t = &topicQueues{}
		p.topics[name] = t
	}
	return t
}

// queuesOf returns the topic's writable queues, asking the name server
// when it has none yet.
func (p *directProducer) queuesOf(topic string) ([]writeQueue, error) {
	t := p.topic(topic)
	if q := t.queues.Load(); q != nil {
		return *q, nil
	}
	t.fetch.Lock()
	defer t.fetch.Unlock()
	if q := t.queues.Load(); q != nil {
		return *q, nil
	}
	qs, err := p.lookupQueues(topic)
	if err != nil {
		// Not the cause's text: a refused name server is no refused
		// broker (classify).
		return nil, fmt.Errorf("the topic=%s route info not found: %w", topic, rmqerrors.ErrRouteNotFound)
	}
	t.queues.Store(&qs)
	return qs, nil
}

// lookupQueues asks the name server for the topic's route, and for the
// default topic's when the topic is unknown (the Java producer's
// getDefaultTopicRouteInfoFromNameServer, for autoCreateTopicEnable).
func (p *directProducer) lookupQueues(topic string) ([]writeQueue, error) {
	route, err := p.routeOf(topic)
	limit := 0
	var broker *primitive.MQBrokerErr
	if errors.As(err, &broker) && broker.ResponseCode == respTopicNotExist {
		route, err = p.routeOf(defaultTopic)
		limit = defaultTopicQueues
	}
	if err != nil {
		return nil, err
	}
	qs := route.writeQueues(limit)
	if len(qs) == 0 {
		return nil, errors.New("no writable queue")
	}
	return qs, nil
}

// routeOf asks the name servers in turn for a topic's route, on a
// connection of its own, from the last one that answered.
func (p *directProducer) routeOf(topic string) (*topicRoute, error) {
	fields := []extField{{"topic", topic}}
	fields = p.sign(fields, nil)
	frame := appendRequest(nil, serializeJSON, codeGetRouteInfoByTopic, p.opaque.Add(1), fields, nil)
	var last error = errors.New("no name server address")
	first := int(p.namesrvAt.Load())
	for i := range p.namesrv {
		at := (first + i) % len(p.namesrv)
		reply, err := roundTripOnce(p.namesrv[at], frame, namesrvTimeout)
		if err != nil {
			last = err
			continue
		}
		p.namesrvAt.Store(int32(at)) // the next lookup starts at the one that answered
		if reply.code != respSuccess {
			return nil, &primitive.MQBrokerErr{ResponseCode: int16(reply.code), ErrorMessage: reply.remark}
		}
		return parseTopicRoute(reply.body)
	}
	return nil, last
}

// roundTripOnce dials addr, writes one request frame and reads one reply.
func roundTripOnce(addr string, frame []byte, timeout time.Duration) (*remotingReply, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(frame); err != nil {
		return nil, err
	}
	var word [4]byte
	if _, err := io.ReadFull(c, word[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(word[:])
	if n > maxFrame {
		return nil, fmt.Errorf("remoting frame of %d bytes", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(c, buf); err != nil {
		return nil, err
	}
	return decodeFrame(buf)
}

// refreshRoutes asks again for every known topic's route every 30 s, as
// the Java client's updateTopicRouteInfoFromNameServer task; a failed
// lookup keeps the route it had.
func (p *directProducer) refreshRoutes() {
	defer p.wg.Done()
	tick := time.NewTicker(routeRefresh)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		names := make([]string, 0, len(p.topics))
		for name := range p.topics {
			names = append(names, name)
		}
		p.mu.Unlock()
		for _, name := range names {
			if qs, err := p.lookupQueues(name); err == nil {
				p.topic(name).queues.Store(&qs)
			}
		}
	}
}

// pickQueue is selectOneMessageQueue: the next queue round-robin, on a
// broker other than the one that just failed when there is one.
func (p *directProducer) pickQueue(qs []writeQueue, lastBroker string) writeQueue {
	if lastBroker != "" {
		for range qs {
			q := qs[p.nextQueue.Add(1)%uint32(len(qs))]
			if q.broker != lastBroker {
				return q
			}
		}
	}
	return qs[p.nextQueue.Add(1)%uint32(len(qs))]
}

// ---- sending --------------------------------------------------------------

// outgoing is one message as it goes on the wire: the header fields but
// the queue, and the body.
type outgoing struct {
	topic  string
	props  string
	flag   int32
	body   []byte
	uniqID string
}

// prepare turns the one message of a send into what each try writes, its
// properties with a UNIQ_KEY of ours (as the Java client's
// MessageClientIDSetter adds).
func (p *directProducer) prepare(msgs []*primitive.Message) (*outgoing, error) {
	if len(msgs) != 1 {
		return nil, errBatch
	}
	m := msgs[0]
	id := p.uniq.next()
	props := m.GetProperties()
	buf := make([]byte, 0, 64)
	buf = appendProperties(buf, props)
	if _, ok := props[primitive.PropertyUniqueClientMessageIdKeyIndex]; !ok {
		buf = append(buf, primitive.PropertyUniqueClientMessageIdKeyIndex...)
		buf = append(buf, 1)
		buf = append(buf, id...)
		buf = append(buf, 2)
	}
	return &outgoing{topic: m.Topic, props: string(buf), flag: m.Flag, body: m.Body, uniqID: id}, nil
}

// fields are SendMessageRequestHeaderV2's, with its one-letter names.
func (p *directProducer) fields(o *outgoing, q writeQueue) []extField {
	f := make([]extField, 0, 15)
	f = append(f,
		extField{"a", p.group},
		extField{"b", o.topic},
		extField{"c", defaultTopic},
		extField{"d", strconv.Itoa(defaultTopicQueues)},
		extField{"e", strconv.Itoa(q.id)},
		extField{"f", "0"}, // sysFlag: no compression on this path
		extField{"g", strconv.FormatInt(time.Now().UnixMilli(), 10)},
		extField{"h", strconv.Itoa(int(o.flag))},
		extField{"i", o.props},
		extField{"j", "0"},
		extField{"k", "false"},
		extField{"m", "false"},
		extField{"n", q.broker},
	)
	return p.sign(f, o.body)
}

// sign adds the ACL fields when -a true: AccessKey, and Signature, the
// base64 HMAC-SHA1 under the secret key of every field's value in key
// order, AccessKey included, followed by the body.
func (p *directProducer) sign(f []extField, body []byte) []extField {
	if !p.cred.enabled {
		return f
	}
	f = append(f, extField{"AccessKey", p.cred.accessKey})
	order := make([]extField, len(f))
	copy(order, f)
	sort.Slice(order, func(i, j int) bool { return order[i].key < order[j].key })
	mac := hmac.New(sha1.New, []byte(p.cred.secretKey))
	for _, e := range order {
		_, _ = io.WriteString(mac, e.value)
	}
	mac.Write(body)
	return append(f, extField{"Signature", base64.StdEncoding.EncodeToString(mac.Sum(nil))})
}

// outcome is what a finished try means for the send: nil and a result
// for a stored message; retry says whether another try may follow.
func (p *directProducer) outcome(o *outgoing, q writeQueue, reply *remotingReply, err error) (res *primitive.SendResult, retry bool, _ error) {
	if err != nil {
		return nil, !errors.Is(err, errSendTimeout) && !errors.Is(err, errProducerClosed), err
	}
	var status primitive.SendStatus
	switch reply.code {
	case respSuccess:
		status = primitive.SendOK
	case respFlushDiskTimeout:
		status = primitive.SendFlushDiskTimeout
	case respFlushSlaveTimeout:
		status = primitive.SendFlushSlaveTimeout
	case respSlaveNotAvailable:
		status = primitive.SendSlaveNotAvailable
	default:
		// The Java producer's retryResponseCodes are tried again.
		switch reply.code {
		case respTopicNotExist, respServiceUnavailable, respSystemError, respNoPermission:
			retry = true
		}
		return nil, retry, &primitive.MQBrokerErr{ResponseCode: int16(reply.code), ErrorMessage: reply.remark}
	}
	qid, _ := strconv.Atoi(reply.ext["queueId"])
	off, _ := strconv.ParseInt(reply.ext["queueOffset"], 10, 64)
	return &primitive.SendResult{
		Status: status, MsgID: o.uniqID, OffsetMsgID: reply.ext["msgId"], QueueOffset: off,
		TransactionID: reply.ext["transactionId"], RegionID: reply.ext["MSG_REGION"],
		MessageQueue: &primitive.MessageQueue{Topic: o.topic, BrokerName: q.broker, QueueId: qid},
	}, false, nil
}

// SendSync sends one message and waits for the broker's answer, trying
// again on another queue after a failure while the 3 s last.
func (p *directProducer) SendSync(_ context.Context, msgs ...*primitive.Message) (*primitive.SendResult, error) {
	o, err := p.prepare(msgs)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(p.timeout)
	done := make(chan tryResult, 1)
	lastBroker := ""
	var lastErr error
	for try := 0; try <= p.retries; try++ {
		qs, qerr := p.queuesOf(o.topic)
		if qerr != nil {
			return nil, qerr
		}
		q := p.pickQueue(qs, lastBroker)
		if !time.Now().Before(deadline) {
			// Out of time: the last try's failure (a refused
			// connection stays one for classify).
			return nil, cmp.Or(lastErr, errSendTimeout)
		}
		p.start(o, q, deadline, func(r *remotingReply, err error) { done <- tryResult{r, err} })
		tr := <-done
		res, retry, serr := p.outcome(o, q, tr.reply, tr.err)
		if serr == nil || !retry || try == p.retries {
			return res, serr
		}
		lastBroker, lastErr = q.broker, serr
	}
	return nil, errSendTimeout // not reached
}

type tryResult struct {
	reply *remotingReply
	err   error
}

// SendAsync sends one message; f runs once with the outcome, after up to
// two more tries on another queue, within 3 s of the call.
func (p *directProducer) SendAsync(_ context.Context, f func(context.Context, *primitive.SendResult, error), msgs ...*primitive.Message) error {
	o, err := p.prepare(msgs)
	if err != nil {
		return err
	}
	qs, err := p.queuesOf(o.topic)
	if err != nil {
		return err
	}
	p.asyncTry(o, p.pickQueue(qs, ""), time.Now().Add(p.timeout), 0, f)
	return nil
}

func (p *directProducer) asyncTry(o *outgoing, q writeQueue, deadline time.Time, try int, f func(context.Context, *primitive.SendResult, error)) {
	p.start(o, q, deadline, func(r *remotingReply, err error) {
		res, retry, serr := p.outcome(o, q, r, err)
		if serr == nil || !retry || try == p.retries || !time.Now().Before(deadline) {
			f(context.Background(), res, serr)
			return
		}
		// Not on the connection's reader: the next try may dial.
		go func() {
			qs, qerr := p.queuesOf(o.topic)
			if qerr != nil {
				f(context.Background(), nil, qerr)
				return
			}
			p.asyncTry(o, p.pickQueue(qs, q.broker), deadline, try+1, f)
		}()
	})
}

// start sends one try to q's broker; finish runs once, with the reply or
// the error (on the connection's reader or sweeper, or here).
func (p *directProducer) start(o *outgoing, q writeQueue, deadline time.Time, finish func(*remotingReply, error)) {
	l, err := p.link(q.addr, deadline)
	if err != nil {
		finish(nil, err)
		return
	}
	fields := p.fields(o, q)
	l.enqueue(p, fields, o.body, deadline, finish)
}

// ---- connections ----------------------------------------------------------

// linkDial is a connection being made; the senders that need it wait.
type linkDial struct {
	done chan struct{}
	link *brokerLink
	err  error
}

// link returns the connection to addr, dialing it when there is none.
func (p *directProducer) link(addr string, deadline time.Time) (*brokerLink, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errProducerClosed
	}
	if l := p.links[addr]; l != nil {
		p.mu.Unlock()
		return l, nil
	}
	d := p.dials[addr]
	if d == nil {
		d = &linkDial{done: make(chan struct{})}
		p.dials[addr] = d
		p.mu.Unlock()
		c, err := net.DialTimeout("tcp", addr, max(min(connectTimeout, time.Until(deadline)), time.Millisecond))
		p.mu.Lock()
		delete(p.dials, addr)
		switch {
		case err != nil:
			d.err = fmt.Errorf("connect to %s failed: %w", addr, err)
		case p.closed:
			c.Close()
			d.err = errProducerClosed
		default:
			d.link = newBrokerLink(p, addr, c)
			p.links[addr] = d.link
		}
		p.mu.Unlock()
		close(d.done)
		return d.link, d.err
	}
	p.mu.Unlock()
	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	select {
	case <-d.done:
		return d.link, d.err
	case <-wait.C:
		return nil, errSendTimeout
	}
}

// forget drops l from the connections if it is still there.
func (p *directProducer) forget(l *brokerLink) {
	p.mu.Lock()
	if p.links[l.addr] == l {
		delete(p.links, l.addr)
	}
	p.mu.Unlock()
}

// sweep fails the requests past their deadline every sweepEvery; a
// connection that has answered nothing for a whole send timeout while
// requests on it time out is taken as stalled and closed, so the next
// tries go over a new one.
func (p *directProducer) sweep() {
	defer p.wg.Done()
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case now := <-tick.C:
			p.mu.Lock()
			links := make([]*brokerLink, 0, len(p.links))
			for _, l := range p.links {
				links = append(links, l)
			}
			p.mu.Unlock()
			for _, l := range links {
				if l.expire(now) && now.Sub(time.Unix(0, l.lastReply.Load())) > p.timeout {
					l.fail(fmt.Errorf("connection to %s stalled: no reply for %s", l.addr, p.timeout))
				}
			}
		}
	}
}

// brokerLink is one connection to a broker: senders append their frames
// to out, a writer goroutine writes whatever has gathered in one call,
// and a reader goroutine hands each reply to the request of its opaque.
type brokerLink struct {
	addr string
	conn net.Conn
	p    *directProducer

	mu      sync.Mutex
	out     []byte
	pending map[int32]*inflightSend
	broken  error
	wake    chan struct{}

	lastReply atomic.Int64 // unix nanoseconds
}

type inflightSend struct {
	deadline time.Time
	finish   func(*remotingReply, error)
}

func newBrokerLink(p *directProducer, addr string, c net.Conn) *brokerLink {
	l := &brokerLink{addr: addr, conn: c, p: p, pending: map[int32]*inflightSend{}, wake: make(chan struct{}, 1)}
	l.lastReply.Store(time.Now().UnixNano())
	p.wg.Add(2)
	go l.writeLoop()
	go l.readLoop()
	return l
}

func (l *brokerLink) enqueue(p *directProducer, fields []extField, body []byte, deadline time.Time, finish func(*remotingReply, error)) {
	l.mu.Lock()
	if err := l.broken; err != nil {
		l.mu.Unlock()
		finish(nil, err)
		return
	}
	opaque := p.opaque.Add(1)
	l.out = appendRequest(l.out, p.serialize, codeSendMessageV2, opaque, fields, body)
	l.pending[opaque] = &inflightSend{deadline: deadline, finish: finish}
	select { // under the lock: fail closes wake
	case l.wake <- struct{}{}:
	default:
	}
	l.mu.Unlock()
}

// writeLoop writes the gathered frames, each batch in one write call.
func (l *brokerLink) writeLoop() {
	defer l.p.wg.Done()
	var spare []byte
	for range l.wake {
		for {
			l.mu.Lock()
			if l.broken != nil {
				l.mu.Unlock()
				return
			}
			buf := l.out
			l.out = spare[:0]
			l.mu.Unlock()
			if len(buf) == 0 {
				spare = buf
				break
			}
			if _, err := l.conn.Write(buf); err != nil {
				l.fail(fmt.Errorf("write to %s: %w", l.addr, err))
				return
			}
			if cap(buf) > 4<<20 {
				buf = nil // a burst's buffer is not kept
			}
			spare = buf
		}
	}
}

// readLoop reads replies until the connection ends.
func (l *brokerLink) readLoop() {
	defer l.p.wg.Done()
	r := bufio.NewReaderSize(l.conn, 64<<10)
	var word [4]byte
	var frame []byte
	for {
		if _, err := io.ReadFull(r, word[:]); err != nil {
			l.fail(fmt.Errorf("read from %s: %w", l.addr, err))
			return
		}
		n := int(binary.BigEndian.Uint32(word[:]))
		if n > maxFrame {
			l.fail(fmt.Errorf("remoting frame of %d bytes from %s", n, l.addr))
			return
		}
		if cap(frame) < n {
			frame = make([]byte, n)
		}
		frame = frame[:n]
		if _, err := io.ReadFull(r, frame); err != nil {
			l.fail(fmt.Errorf("read from %s: %w", l.addr, err))
			return
		}
		reply, err := decodeFrame(frame)
		if err != nil {
			l.fail(fmt.Errorf("reply from %s: %w", l.addr, err))
			return
		}
		if reply.flag&flagResponse == 0 {
			continue // a request of the broker's: none concerns a plain producer
		}
		reply.body = append([]byte(nil), reply.body...)
		l.lastReply.Store(time.Now().UnixNano())
		l.mu.Lock()
		s := l.pending[reply.opaque]
		delete(l.pending, reply.opaque)
		l.mu.Unlock()
		if s != nil {
			s.finish(reply, nil)
		}
	}
}

// expire fails the requests past their deadline and reports whether
// there were any.
func (l *brokerLink) expire(now time.Time) bool {
	var late []*inflightSend
	l.mu.Lock()
	for op, s := range l.pending {
		if !now.Before(s.deadline) {
			late = append(late, s)
			delete(l.pending, op)
		}
	}
	l.mu.Unlock()
	for _, s := range late {
		s.finish(nil, errSendTimeout)
	}
	return len(late) > 0
}

// fail ends the connection: every request waiting on it fails with err.
func (l *brokerLink) fail(err error) {
	l.mu.Lock()
	if l.broken != nil {
		l.mu.Unlock()
		return
	}
	l.broken = err
	pending := l.pending
	l.pending = nil
	l.mu.Unlock()
	l.p.forget(l)
	l.conn.Close()
	close(l.wake)
	for _, s := range pending {
		s.finish(nil, err)
	}
}

// ---- message ids ----------------------------------------------------------

// uniqIDs makes the UNIQ_KEY property, the client's id of a message: 32
// hex digits, the first 20 fixed for the process (its pid and random
// bytes), the last 12 a counter.
type uniqIDs struct {
	prefix [20]byte
	n      atomic.Uint64
}

func (u *uniqIDs) init() {
	var b [10]byte
	binary.BigEndian.PutUint16(b[:], uint16(os.Getpid()))
	_, _ = rand.Read(b[2:])
	hex.Encode(u.prefix[:], b[:])
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	u.n.Store(binary.BigEndian.Uint64(seed[:]) >> 24)
}

func (u *uniqIDs) next() string {
	var out [32]byte
	copy(out[:], u.prefix[:])
	var c [8]byte
	binary.BigEndian.PutUint64(c[:], u.n.Add(1))
	hex.Encode(out[20:], c[2:])
	for i := range out {
		if out[i] >= 'a' {
			out[i] -= 'a' - 'A'
		}
	}
	return string(out[:])
}
