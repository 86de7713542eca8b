package perftest

import (
	"encoding/binary"
	"errors"
	"math"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// framedConn is the socket under amqp091-go, and the run's hot path.
// amqp091-go keeps the protocol: handshake, channels, declarations,
// confirms, returns, flow control, heartbeats, closing. But it spends
// most of a run's CPU on the three things a run does per message: it
// allocates and dispatches every delivery through two goroutines, encodes
// every frame through reflection-based writes, and wakes its heartbeat
// goroutine for each frame it sends. So for the channels registered here
// a run writes basic.publish, basic.ack and basic.nack frames itself, and
// takes basic.deliver and its content off the socket before amqp091-go
// reads it, handing a consumer its deliveries a batch at a time. Every
// other frame passes through untouched, in order.
//
// Writes are coalesced: Write and the frames written here are appended to
// a buffer, and one writer goroutine sends whatever has accumulated while
// its previous write was in progress, so an idle connection sends at once
// (no added latency) and a busy one sends many frames per system call.
// Our frames go in only between two of amqp091-go's, never inside one it
// has begun (it may write a frame in pieces).
type framedConn struct {
	net.Conn

	mu      sync.Mutex
	ready   *sync.Cond // bytes to send, or closing
	room    *sync.Cond // room in pending, or amqp091-go at a frame boundary
	pending []byte
	spare   []byte
	err     error
	closing bool
	done    chan struct{}
	// lib follows amqp091-go's own bytes, to know where its frames end.
	lib frameScanner
	// writable are the channels whose frames we may write: open, and
	// registered by a producer or a consumer. ended is set once either
	// side has begun closing the connection.
	writable map[uint16]bool
	ended    bool

	// The read side: only amqp091-go's reader goroutine calls Read.
	in          []byte // socket bytes not yet parsed: in[inAt:inEnd]
	inAt, inEnd int
	out         []byte // frames for amqp091-go: out[outAt:]
	outAt       int
	readErr     error
	passAll     bool // the server sent what is not a frame: amqp091-go reports it
	taps        atomic.Pointer[map[uint16]channelTap]
	woken       []*deliveryFeed
	// amqp091-go sets a read deadline of three heartbeats after each frame
	// it reads; deliveries taken here are reads too, so the deadline moves
	// on with them (at most once a second).
	readTimeout atomic.Int64
	armedAt     time.Time
}

// maxPending bounds what a writer may queue before it blocks, as a
// socket buffer would.
const maxPending = 1 << 20

// readBufferSize is what one read system call may take off a connection
// (a frame larger than that grows the buffer to hold it).
const readBufferSize = 64 << 10

// maxReadFrame bounds the frames read here; RabbitMQ's frame_max is at
// most 128 KB unless configured otherwise, and amqp091-go enforces the
// negotiated one.
const maxReadFrame = 64 << 20

const (
	frameMethod    = 1
	frameHeader    = 2
	frameBody      = 3
	frameHeartbeat = 8
	frameEnd       = 0xCE
)

func newFramedConn(c net.Conn) *framedConn {
	fc := &framedConn{Conn: c, done: make(chan struct{}), writable: map[uint16]bool{},
		in: make([]byte, readBufferSize)}
	fc.lib.protocolLeft = len(protocolHeader)
	fc.ready = sync.NewCond(&fc.mu)
	fc.room = sync.NewCond(&fc.mu)
	go fc.flushLoop()
	return fc
}

// protocolHeader opens every AMQP 0-9-1 connection, before any frame.
const protocolHeader = "AMQP\x00\x00\x09\x01"

// Write is amqp091-go's.
func (c *framedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) >= maxPending && c.err == nil && !c.closing {
		c.room.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.closing {
		return 0, net.ErrClosed
	}
	c.pending = append(c.pending, p...)
	c.lib.scan(p, c.libFrame)
	c.ready.Signal()
	if !c.lib.inFrame() {
		c.room.Broadcast()
	}
	return len(p), nil
}

// libFrame sees the start of each frame amqp091-go writes: once it closes
// a channel (or the connection), we write nothing more on it.
func (c *framedConn) libFrame(head []byte) {
	if head[0] != frameMethod || len(head) < 11 {
		return
	}
	channel := binary.BigEndian.Uint16(head[1:3])
	class, method := binary.BigEndian.Uint16(head[7:9]), binary.BigEndian.Uint16(head[9:11])
	switch {
	case class == 20 && (method == 40 || method == 41): // channel.close, close-ok
		delete(c.writable, channel)
	case class == 10 && (method == 50 || method == 51): // connection.close, close-ok
		c.ended = true
	}
}

// beginWrite waits until frames of ours may be appended for channel: the
// caller holds mu, and appends to pending if it returns nil.
func (c *framedConn) beginWrite(channel uint16) error {
	for (c.lib.inFrame() || len(c.pending) >= maxPending) && c.err == nil && !c.closing {
		c.room.Wait()
	}
	switch {
	case c.err != nil:
		return c.err
	case c.closing, c.ended, !c.writable[channel]:
		return amqp.ErrClosed
	}
	return nil
}

// writeFrames appends whole frames of channel's to what is sent.
func (c *framedConn) writeFrames(channel uint16, frames []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.beginWrite(channel); err != nil {
		return err
	}
	c.pending = append(c.pending, frames...)
	c.ready.Signal()
	return nil
}

func (c *framedConn) flushLoop() {
	defer close(c.done)
	for {
		c.mu.Lock()
		for len(c.pending) == 0 && !c.closing {
			c.ready.Wait()
		}
		if len(c.pending) == 0 && c.closing {
			c.mu.Unlock()
			return
		}
		buf := c.pending
		c.pending = c.spare[:0]
		c.room.Broadcast()
		c.mu.Unlock()
		_, err := c.Conn.Write(buf)
		c.mu.Lock()
		c.spare = buf[:0]
		if err != nil {
			c.err = err
			c.pending = nil
			c.room.Broadcast()
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// Close sends what is queued (for at most a second), then closes.
func (c *framedConn) Close() error {
	c.mu.Lock()
	c.closing = true
	c.ready.Signal()
	c.room.Broadcast()
	c.mu.Unlock()
	select {
	case <-c.done:
	case <-time.After(time.Second):
	}
	return c.Conn.Close()
}

// SetReadDeadline is amqp091-go's heartbeat timeout; Read moves it on.
func (c *framedConn) SetReadDeadline(t time.Time) error {
	if t.IsZero() {
		c.readTimeout.Store(0)
	} else {
		c.readTimeout.Store(int64(time.Until(t)))
	}
	return c.Conn.SetReadDeadline(t)
}

// Read is amqp091-go's reader: the frames that are not ours.
func (c *framedConn) Read(p []byte) (int, error) {
	for c.outAt == len(c.out) {
		if c.readErr != nil {
			return 0, c.readErr
		}
		c.out, c.outAt = c.out[:0], 0
		c.fill()
	}
	n := copy(p, c.out[c.outAt:])
	c.outAt += n
	return n, nil
}

// fill reads the socket once and sorts the complete frames it holds.
func (c *framedConn) fill() {
	if c.inAt == c.inEnd {
		c.inAt, c.inEnd = 0, 0
	} else if len(c.in)-c.inEnd < 4096 {
		c.inEnd = copy(c.in, c.in[c.inAt:c.inEnd])
		c.inAt = 0
	}
	n, err := c.Conn.Read(c.in[c.inEnd:])
	c.inEnd += n
	if n > 0 {
		if d := c.readTimeout.Load(); d > 0 {
			if now := time.Now(); now.Sub(c.armedAt) > time.Second {
				c.armedAt = now
				_ = c.Conn.SetReadDeadline(now.Add(time.Duration(d)))
			}
		}
		c.sort()
	}
	if err != nil {
		c.readErr = err
	}
}

// sort takes our frames out of what has been read and queues the rest
// for amqp091-go, then wakes the consumers that got deliveries.
func (c *framedConn) sort() {
	for !c.passAll {
		b := c.in[c.inAt:c.inEnd]
		if len(b) < 7 {
			break
		}
		typ := b[0]
		if typ != frameMethod && typ != frameHeader && typ != frameBody && typ != frameHeartbeat {
			c.passAll = true
			break
		}
		total := 8 + int(binary.BigEndian.Uint32(b[3:7]))
		if total > maxReadFrame {
			// Beyond any frame size a broker negotiates: amqp091-go
			// refuses it.
			c.passAll = true
			break
		}
		if len(b) < total {
			if c.inAt+total > len(c.in) {
				// Make room for the whole frame: at the start of the
				// buffer, in a larger one if it is larger.
				in := c.in
				if total > len(in) {
					in = make([]byte, total)
				}
				c.inEnd = copy(in, b)
				c.in, c.inAt = in, 0
			}
			break
		}
		if b[total-1] != frameEnd {
			c.passAll = true
			break
		}
		c.inAt += total
		if !c.take(typ, binary.BigEndian.Uint16(b[1:3]), b[7:total-1]) {
			c.out = append(c.out, b[:total]...)
		}
	}
	if c.passAll {
		c.out = append(c.out, c.in[c.inAt:c.inEnd]...)
		c.inAt = c.inEnd
	}
	for _, f := range c.woken {
		f.handOver()
	}
	c.woken = c.woken[:0]
}

// take handles one frame from the server if it is ours.
func (c *framedConn) take(typ byte, channel uint16, payload []byte) bool {
	if typ == frameMethod && len(payload) >= 4 {
		class, method := binary.BigEndian.Uint16(payload[0:2]), binary.BigEndian.Uint16(payload[2:4])
		switch {
		case class == 20 && (method == 40 || method == 41): // channel.close, close-ok
			c.channelEnded(channel)
			return false
		case class == 10 && method == 50: // connection.close
			c.mu.Lock()
			c.ended = true
			c.mu.Unlock()
			return false
		}
	}
	taps := c.taps.Load()
	if taps == nil {
		return false
	}
	tap := (*taps)[channel]
	if tap.confirms != nil && typ == frameMethod && len(payload) >= 13 {
		if class, method := binary.BigEndian.Uint16(payload[0:2]), binary.BigEndian.Uint16(payload[2:4]); class == 60 && (method == 80 || method == 120) {
			// basic.ack or basic.nack: counted here, confirmed by amqp091-go.
			tap.confirms.frame(binary.BigEndian.Uint64(payload[4:12]), payload[12]&1 != 0, method == 80)
			return false
		}
	}
	f := tap.feed
	if f == nil {
		return false
	}
	took, complete := f.take(typ, payload)
	if complete && !f.woken {
		f.woken = true
		c.woken = append(c.woken, f)
	}
	return took
}

// channelEnded forgets a channel the server closed or confirmed closed.
func (c *framedConn) channelEnded(channel uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.writable, channel)
	if taps := c.taps.Load(); taps != nil {
		if _, ok := (*taps)[channel]; ok {
			c.setTapLocked(channel, channelTap{})
		}
	}
}

// channelTap is what the reader takes or watches on one channel: its
// deliveries, or its confirms.
type channelTap struct {
	feed     *deliveryFeed
	confirms *confirmTap
}

// setTapLocked replaces the read side's map (mu held), the zero tap
// removing the channel's: the reader loads it once a frame, without a
// lock.
func (c *framedConn) setTapLocked(channel uint16, tap channelTap) {
	next := map[uint16]channelTap{}
	if old := c.taps.Load(); old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	if tap == (channelTap{}) {
		delete(next, channel)
	} else {
		next[channel] = tap
	}
	c.taps.Store(&next)
}

// confirmTap counts a confirm-mode channel's confirms per frame, as
// PerfTest's perftest_confirm_size does: a basic.ack or basic.nack
// covers one message, or with multiple every one still unconfirmed up to
// its tag (amqp091-go hands a multiple one over split into one
// confirmation per message).
type confirmTap struct {
	record func(n int64)
	upTo   uint64          // every tag up to this one is confirmed
	above  map[uint64]bool // tags above upTo confirmed on their own
	// frames, when set, keeps each frame for --verbose's "publish
	// confirm" line, by the first tag it confirms: the producer prints it
	// when amqp091-go hands that confirmation over.
	frames *sync.Map // uint64 -> confirmFrame
}

// confirmFrame is one basic.ack or basic.nack: its tag and how many
// messages it confirmed.
type confirmFrame struct {
	tag   uint64
	count int64
	ack   bool
}

func (t *confirmTap) frame(tag uint64, multiple, ack bool) {
	first, n := tag, int64(1)
	if multiple {
		first, n = t.upTo+1, 0
		if tag > t.upTo {
			n = int64(tag - t.upTo)
			for s := range t.above {
				if s <= tag {
					n--
					delete(t.above, s)
				}
			}
			t.upTo = tag
		}
	} else {
		switch {
		case tag == t.upTo+1:
			t.upTo = tag
			for t.above[t.upTo+1] {
				delete(t.above, t.upTo+1)
				t.upTo++
			}
		case tag > t.upTo:
			t.above[tag] = true
		}
	}
	t.record(n)
	if t.frames != nil && n > 0 {
		t.frames.Store(first, confirmFrame{tag: tag, count: n, ack: ack})
	}
}

// tapConfirms counts ch's confirms per frame into record (and keeps them
// in frames, unless nil); false when its number cannot be known.
func (c *framedConn) tapConfirms(ch *amqp.Channel, record func(int64), frames *sync.Map) bool {
	n, ok := channelNumber(ch)
	if !ok {
		return false
	}
	c.mu.Lock()
	c.setTapLocked(n, channelTap{confirms: &confirmTap{record: record, above: map[uint64]bool{}, frames: frames}})
	c.mu.Unlock()
	return true
}

// channelNumber is the channel's number on its connection, which
// amqp091-go does not export; false if a release of it no longer has
// the field, and the run then leaves the channel's frames to amqp091-go.
func channelNumber(ch *amqp.Channel) (uint16, bool) {
	v := reflect.ValueOf(ch)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return 0, false
	}
	f := v.Elem().FieldByName("id")
	if !f.IsValid() || f.Kind() != reflect.Uint16 {
		return 0, false
	}
	return uint16(f.Uint()), true
}

// fastPublisher writes a producer channel's publishes.
type fastPublisher struct {
	conn     *framedConn
	channel  uint16
	frameMax int // the connection's negotiated frame size: 0 for no limit
}

// newFastPublisher registers ch for our publishes; nil when its number
// cannot be known.
func newFastPublisher(fc *framedConn, conn *amqp.Connection, ch *amqp.Channel) *fastPublisher {
	n, ok := channelNumber(ch)
	if fc == nil || !ok {
		return nil
	}
	fc.mu.Lock()
	fc.writable[n] = true
	fc.mu.Unlock()
	return &fastPublisher{conn: fc, channel: n, frameMax: conn.Config.FrameSize}
}

// errNotFramed is a message whose fields our encoder does not write (a
// header of another type, a string over 255 bytes): amqp091-go publishes
// it, and reports what is wrong with it.
var errNotFramed = errors.New("not framed here")

// publish sends msg as amqp091-go's Publish does: basic.publish, a
// content header and the body in frames of the negotiated size. A large
// body goes out as the writer drains, a frame at a time, other channels'
// frames maybe between them (as AMQP allows), so what is queued stays
// within maxPending and a frame.
func (p *fastPublisher) publish(exchange, key string, mandatory bool, msg *amqp.Publishing) error {
	if !framable(exchange, key, msg) {
		return errNotFramed
	}
	c := p.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.beginWrite(p.channel); err != nil {
		return err
	}
	c.pending = appendPublishHead(c.pending, p.channel, exchange, key, mandatory, msg)
	chunk := len(msg.Body)
	if p.frameMax > 0 {
		chunk = p.frameMax - 8
	}
	for body := msg.Body; len(body) > 0; {
		if len(c.pending) >= maxPending {
			c.ready.Signal()
			if err := c.beginWrite(p.channel); err != nil {
				return err
			}
		}
		n := min(chunk, len(body))
		b, start := beginFrame(c.pending, frameBody, p.channel)
		c.pending = endFrame(append(b, body[:n]...), start)
		body = body[n:]
	}
	c.ready.Signal()
	return nil
}

// framable reports whether appendPublishHead can encode the message.
func framable(exchange, key string, msg *amqp.Publishing) bool {
	for _, s := range [...]string{exchange, key, msg.ContentType, msg.ContentEncoding, msg.CorrelationId,
		msg.ReplyTo, msg.Expiration, msg.MessageId, msg.Type, msg.UserId, msg.AppId} {
		if len(s) > math.MaxUint8 {
			return false
		}
	}
	for k, v := range msg.Headers {
		if len(k) > math.MaxUint8 {
			return false
		}
		switch v.(type) {
		case int64, string:
		default:
			return false
		}
	}
	return true
}

func beginFrame(b []byte, typ byte, channel uint16) ([]byte, int) {
	b = append(b, typ, byte(channel>>8), byte(channel), 0, 0, 0, 0)
	return b, len(b)
}

func endFrame(b []byte, start int) []byte {
	binary.BigEndian.PutUint32(b[start-4:start], uint32(len(b)-start))
	return append(b, frameEnd)
}

func appendShortString(b []byte, s string) []byte {
	return append(append(b, byte(len(s))), s...)
}

// AMQP 0-9-1 basic property flags, highest bit first.
const (
	propContentType = 1 << (15 - iota)
	propContentEncoding
	propHeaders
	propDeliveryMode
	propPriority
	propCorrelationID
	propReplyTo
	propExpiration
	propMessageID
	propTimestamp
	propType
	propUserID
	propAppID
)

// appendPublishHead encodes basic.publish and its content header, with
// the properties amqp091-go would send for msg (those that are set).
func appendPublishHead(b []byte, channel uint16, exchange, key string, mandatory bool, msg *amqp.Publishing) []byte {
	b, start := beginFrame(b, frameMethod, channel)
	b = append(b, 0, 60, 0, 40, 0, 0) // basic.publish, reserved
	b = appendShortString(b, exchange)
	b = appendShortString(b, key)
	var bits byte
	if mandatory {
		bits = 1
	}
	b = endFrame(append(b, bits), start)

	b, start = beginFrame(b, frameHeader, channel)
	b = append(b, 0, 60, 0, 0) // class basic, weight
	b = binary.BigEndian.AppendUint64(b, uint64(len(msg.Body)))
	var flags uint16
	set := func(s string, flag uint16) {
		if s != "" {
			flags |= flag
		}
	}
	set(msg.ContentType, propContentType)
	set(msg.ContentEncoding, propContentEncoding)
	if len(msg.Headers) > 0 {
		flags |= propHeaders
	}
	if msg.DeliveryMode > 0 {
		flags |= propDeliveryMode
	}
	if msg.Priority > 0 {
		flags |= propPriority
	}
	set(msg.CorrelationId, propCorrelationID)
	set(msg.ReplyTo, propReplyTo)
	set(msg.Expiration, propExpiration)
	set(msg.MessageId, propMessageID)
	if !msg.Timestamp.IsZero() {
		flags |= propTimestamp
	}
	set(msg.Type, propType)
	set(msg.UserId, propUserID)
	set(msg.AppId, propAppID)
	b = binary.BigEndian.AppendUint16(b, flags)
	short := func(s string, flag uint16) {
		if flags&flag != 0 {
			b = appendShortString(b, s)
		}
	}
	short(msg.ContentType, propContentType)
	short(msg.ContentEncoding, propContentEncoding)
	if flags&propHeaders != 0 {
		b = appendTable(b, msg.Headers)
	}
	if flags&propDeliveryMode != 0 {
		b = append(b, msg.DeliveryMode)
	}
	if flags&propPriority != 0 {
		b = append(b, msg.Priority)
	}
	short(msg.CorrelationId, propCorrelationID)
	short(msg.ReplyTo, propReplyTo)
	short(msg.Expiration, propExpiration)
	short(msg.MessageId, propMessageID)
	if flags&propTimestamp != 0 {
		b = binary.BigEndian.AppendUint64(b, uint64(msg.Timestamp.Unix()))
	}
	short(msg.Type, propType)
	short(msg.UserId, propUserID)
	short(msg.AppId, propAppID)
	return endFrame(b, start)
}

// appendTable encodes a field table of the types framable allows, as
// amqp091-go does: int64 as 'l', string as 'S'.
func appendTable(b []byte, t amqp.Table) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	for k, v := range t {
		b = appendShortString(b, k)
		switch v := v.(type) {
		case int64:
			b = binary.BigEndian.AppendUint64(append(b, 'l'), uint64(v))
		case string:
			b = binary.BigEndian.AppendUint32(append(b, 'S'), uint32(len(v)))
			b = append(b, v...)
		}
	}
	binary.BigEndian.PutUint32(b[at:at+4], uint32(len(b)-at-4))
	return b
}

// fastDelivery is what a consumer uses of a delivery.
type fastDelivery struct {
	tag    uint64
	size   int
	ts     int64 // the body's timestamp (bodyTimestamp), when hasTS
	hasTS  bool
	ownKey bool // the routing key is the consumer's (the run's messages)
}

// deliveryFeed is a consumer channel's deliveries, taken off the socket.
type deliveryFeed struct {
	conn    *framedConn
	channel uint16
	key     string
	wake    chan struct{} // a token when queue has deliveries

	// The reader's: the delivery being read, and those read since the
	// last hand-over.
	ours       bool // the content on the channel is a delivery's
	wantHeader bool
	left       uint64
	cur        fastDelivery
	local      []fastDelivery
	woken      bool

	mu    sync.Mutex
	queue []fastDelivery

	acks []byte // the consumer's acks not yet written
}

// newDeliveryFeed registers ch's deliveries (before basic.consume: they
// may come before consume-ok is read) and its acks; nil when its number
// cannot be known.
func newDeliveryFeed(fc *framedConn, ch *amqp.Channel, key string) *deliveryFeed {
	n, ok := channelNumber(ch)
	if fc == nil || !ok {
		return nil
	}
	f := &deliveryFeed{conn: fc, channel: n, key: key, wake: make(chan struct{}, 1)}
	fc.mu.Lock()
	fc.writable[n] = true
	fc.setTapLocked(n, channelTap{feed: f})
	fc.mu.Unlock()
	return f
}

// take reads one frame of the channel's: a basic.deliver and its content
// are ours; complete is set when a delivery has all its body.
func (f *deliveryFeed) take(typ byte, p []byte) (took, complete bool) {
	switch typ {
	case frameMethod:
		f.ours = false
		if len(p) < 4 || binary.BigEndian.Uint16(p[0:2]) != 60 || binary.BigEndian.Uint16(p[2:4]) != 60 {
			return false, false // not basic.deliver
		}
		d, ok := parseDeliver(p[4:], f.key)
		if !ok {
			return false, false // amqp091-go reports the malformed frame
		}
		f.cur, f.ours, f.wantHeader = d, true, true
		return true, false
	case frameHeader:
		if !f.ours || !f.wantHeader || len(p) < 12 {
			return false, false
		}
		size := binary.BigEndian.Uint64(p[4:12])
		f.cur.size, f.left, f.wantHeader = int(size), size, false
		if size == 0 {
			return true, f.complete()
		}
		return true, false
	case frameBody:
		if !f.ours || f.wantHeader {
			return false, false
		}
		if f.left == uint64(f.cur.size) {
			// The first body frame: it holds the timestamp (a frame is
			// at least 4 KB).
			f.cur.ts, f.cur.hasTS = bodyTimestamp(p)
		}
		f.left -= min(uint64(len(p)), f.left)
		if f.left == 0 {
			return true, f.complete()
		}
		return true, false
	}
	return false, false
}

func (f *deliveryFeed) complete() bool {
	f.local = append(f.local, f.cur)
	f.ours = false
	return true
}

// parseDeliver reads basic.deliver's arguments: consumer tag, delivery
// tag, redelivered, exchange, routing key.
func parseDeliver(p []byte, key string) (fastDelivery, bool) {
	skip := func(p []byte) ([]byte, []byte, bool) {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, nil, false
		}
		return p[1 : 1+int(p[0])], p[1+int(p[0]):], true
	}
	_, p, ok := skip(p) // consumer tag
	if !ok || len(p) < 9 {
		return fastDelivery{}, false
	}
	d := fastDelivery{tag: binary.BigEndian.Uint64(p[0:8])}
	_, p, ok = skip(p[9:]) // exchange
	if !ok {
		return fastDelivery{}, false
	}
	routingKey, _, ok := skip(p)
	if !ok {
		return fastDelivery{}, false
	}
	d.ownKey = string(routingKey) == key
	return d, true
}

// handOver gives the consumer what was read since the last hand-over.
func (f *deliveryFeed) handOver() {
	f.woken = false
	f.mu.Lock()
	f.queue = append(f.queue, f.local...)
	f.mu.Unlock()
	f.local = f.local[:0]
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// takeAll swaps the queued deliveries into batch (emptied first).
func (f *deliveryFeed) takeAll(batch []fastDelivery) []fastDelivery {
	f.mu.Lock()
	batch, f.queue = f.queue, batch[:0]
	f.mu.Unlock()
	return batch
}

// Ack and Nack queue the consumer's frames; flushAcks writes them.
func (f *deliveryFeed) Ack(tag uint64, multiple bool) error {
	f.acks = appendAck(f.acks, f.channel, 80, tag, multiple, false)
	return nil
}

func (f *deliveryFeed) Nack(tag uint64, multiple, requeue bool) error {
	f.acks = appendAck(f.acks, f.channel, 120, tag, multiple, requeue)
	return nil
}

// flushAcks writes the queued acks in one go: at the end of each batch,
// and before anything that waits or that the broker must see after them.
// On a channel that has closed they are dropped, as amqp091-go's Ack
// fails there.
func (f *deliveryFeed) flushAcks() {
	if len(f.acks) > 0 {
		_ = f.conn.writeFrames(f.channel, f.acks)
		f.acks = f.acks[:0]
	}
}

// appendAck encodes basic.ack (method 80) or basic.nack (120).
func appendAck(b []byte, channel uint16, method byte, tag uint64, multiple, requeue bool) []byte {
	b, start := beginFrame(b, frameMethod, channel)
	b = binary.BigEndian.AppendUint64(append(b, 0, 60, 0, method), tag)
	var bits byte
	if multiple {
		bits |= 1
	}
	if requeue {
		bits |= 2
	}
	return endFrame(append(b, bits), start)
}

// frameScanner follows a stream of AMQP frames written in pieces.
type frameScanner struct {
	protocolLeft int      // bytes of the protocol header still to come
	head         [11]byte // a frame's header and the first 4 bytes of its payload
	headN        int
	left         int // bytes of the frame after its head still to come
}

// inFrame reports whether the stream stops inside a frame.
func (s *frameScanner) inFrame() bool {
	return s.left > 0 || s.headN > 0 || (s.protocolLeft > 0 && s.protocolLeft < len(protocolHeader))
}

// scan follows p, calling seen with each frame's head (header and up to
// four bytes of payload: a method's class and id) once it has it.
func (s *frameScanner) scan(p []byte, seen func(head []byte)) {
	for len(p) > 0 {
		switch {
		case s.protocolLeft > 0:
			n := min(s.protocolLeft, len(p))
			s.protocolLeft -= n
			p = p[n:]
		case s.left > 0:
			n := min(s.left, len(p))
			s.left -= n
			p = p[n:]
		case s.headN < 7:
			n := copy(s.head[s.headN:7], p)
			s.headN += n
			p = p[n:]
		default:
			total := 8 + int(binary.BigEndian.Uint32(s.head[3:7]))
			want := min(len(s.head), total)
			n := copy(s.head[s.headN:want], p)
			s.headN += n
			p = p[n:]
			if s.headN == want {
				seen(s.head[:want])
				s.left, s.headN = total-want, 0
			}
		}
	}
}
