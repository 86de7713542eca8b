package perftest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/perfclones/perfclones/internal/testenv"
)

// chunkedConn is a socket that reads a fixed stream k bytes at a time
// and keeps what is written to it.
type chunkedConn struct {
	net.Conn // nil: only what the framing calls is implemented
	in       []byte
	k        int
	mu       sync.Mutex
	written  bytes.Buffer
	maxWrite int
}

func (c *chunkedConn) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.in[:min(c.k, len(c.in))])
	c.in = c.in[n:]
	return n, nil
}

func (c *chunkedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxWrite = max(c.maxWrite, len(p))
	return c.written.Write(p)
}

func (c *chunkedConn) Close() error                      { return nil }
func (c *chunkedConn) SetReadDeadline(t time.Time) error { return nil }

func (c *chunkedConn) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.written.Bytes()...)
}

// framedWritable is the framing over sock with our writes allowed on
// the channels.
func framedWritable(sock net.Conn, channels ...uint16) *framedConn {
	fc := newFramedConn(sock)
	fc.mu.Lock()
	for _, ch := range channels {
		fc.writable[ch] = true
	}
	fc.mu.Unlock()
	return fc
}

func frame(typ byte, channel uint16, payload ...[]byte) []byte {
	b, start := beginFrame(nil, typ, channel)
	for _, p := range payload {
		b = append(b, p...)
	}
	return endFrame(b, start)
}

func method(class, id uint16, args ...[]byte) []byte {
	b := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, class), id)
	for _, a := range args {
		b = append(b, a...)
	}
	return b
}

func short(s string) []byte { return appendShortString(nil, s) }

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// deliver is basic.deliver with its content header.
func deliver(channel uint16, tag uint64, key string, size int) []byte {
	m := frame(frameMethod, channel, method(60, 60, short("ctag"), u64(tag), []byte{0}, short("ex"), short(key)))
	h := frame(frameHeader, channel, []byte{0, 60, 0, 0}, u64(uint64(size)), []byte{0, 0})
	return append(m, h...)
}

func timestampBody(size int, ts int64) []byte {
	b := make([]byte, size)
	if size >= 12 {
		binary.BigEndian.PutUint64(b[4:12], uint64(ts))
	}
	return b
}

func TestFramedConnSortsFrames(t *testing.T) {
	// The stream: frames for amqp091-go and deliveries on channel 2, the
	// consumer's, every one of them split at every chunk size.
	var stream, passed []byte
	add := func(b []byte, ours bool) {
		stream = append(stream, b...)
		if !ours {
			passed = append(passed, b...)
		}
	}
	add(frame(frameMethod, 2, method(60, 21, short("ctag"))), false) // consume-ok
	add(deliver(2, 1, "run-key", 1024), true)
	body := timestampBody(1024, 123456789)
	add(frame(frameBody, 2, body[:600]), true)
	add(frame(frameBody, 2, body[600:]), true)
	add(frame(frameHeartbeat, 0), false)
	add(deliver(2, 2, "other", 0), true)                                                                    // no body frame
	add(deliver(2, 3, "run-key", 8), true)                                                                  // too short for a timestamp
	add(frame(frameBody, 2, make([]byte, 8)), true)                                                         //
	add(frame(frameMethod, 1, method(60, 60, short("c"), u64(9), []byte{0}, short(""), short("k"))), false) // another channel's
	add(frame(frameHeader, 1, []byte{0, 60, 0, 0}, u64(0), []byte{0, 0}), false)
	getOk := frame(frameMethod, 2, method(60, 71, u64(4), []byte{0}, short(""), short("k"), []byte{0, 0, 0, 0}))
	add(getOk, false) // basic.get-ok: its content is amqp091-go's
	add(frame(frameHeader, 2, []byte{0, 60, 0, 0}, u64(3), []byte{0, 0}), false)
	add(frame(frameBody, 2, []byte("abc")), false)
	add(frame(frameMethod, 2, method(20, 40, []byte{0, 200}, short("bye"), []byte{0, 0, 0, 0})), false) // channel.close
	add(deliver(2, 5, "run-key", 0), false)                                                             // after the close: amqp091-go's

	want := []fastDelivery{
		{tag: 1, size: 1024, ts: 123456789, hasTS: true, ownKey: true},
		{tag: 2, size: 0},
		{tag: 3, size: 8, ownKey: true},
	}
	for _, k := range []int{1, 2, 7, 11, 100, 1500, len(stream)} {
		sock := &chunkedConn{in: append([]byte(nil), stream...), k: k}
		fc := framedWritable(sock, 2)
		f := &deliveryFeed{conn: fc, channel: 2, key: "run-key", wake: make(chan struct{}, 1)}
		fc.mu.Lock()
		fc.setTapLocked(2, channelTap{feed: f})
		fc.mu.Unlock()
		got, err := io.ReadAll(fc)
		if err != nil {
			t.Fatalf("chunks of %d: %v", k, err)
		}
		if !bytes.Equal(got, passed) {
			t.Errorf("chunks of %d: amqp091-go read %d bytes, want %d", k, len(got), len(passed))
		}
		if d := f.takeAll(nil); !reflect.DeepEqual(d, want) {
			t.Errorf("chunks of %d: deliveries %+v, want %+v", k, d, want)
		}
		fc.mu.Lock()
		still := fc.writable[2]
		fc.mu.Unlock()
		if still {
			t.Errorf("chunks of %d: channel 2 still writable after the server closed it", k)
		}
		_ = fc.Close()
	}
}

func TestFramedConnPassesWhatIsNotFrames(t *testing.T) {
	// A server refusing the protocol version answers with its own header.
	stream := []byte("AMQP\x00\x00\x09\x01")
	sock := &chunkedConn{in: append([]byte(nil), stream...), k: 3}
	fc := newFramedConn(sock)
	defer fc.Close()
	got, _ := io.ReadAll(fc)
	if !bytes.Equal(got, stream) {
		t.Errorf("read %q, want %q", got, stream)
	}
}

func TestFrameScannerFollowsPieces(t *testing.T) {
	stream := []byte(protocolHeader)
	stream = append(stream, frame(frameMethod, 3, method(20, 10, short("")))...)
	stream = append(stream, frame(frameHeartbeat, 0)...)
	stream = append(stream, frame(frameBody, 3, make([]byte, 5000))...)
	stream = append(stream, frame(frameMethod, 3, method(20, 40, []byte{0, 200}))...)
	// Where frames end: after the protocol header and each frame.
	ends := map[int]bool{0: true}
	at := len(protocolHeader)
	ends[at] = true
	for at < len(stream) {
		at += 8 + int(binary.BigEndian.Uint32(stream[at+3:at+7]))
		ends[at] = true
	}
	for _, piece := range []int{1, 3, 8, 12, 4096} {
		s := frameScanner{protocolLeft: len(protocolHeader)}
		var heads [][]byte
		for i := 0; i < len(stream); i += piece {
			s.scan(stream[i:min(i+piece, len(stream))], func(h []byte) { heads = append(heads, append([]byte(nil), h...)) })
			if end := min(i+piece, len(stream)); s.inFrame() == ends[end] {
				t.Fatalf("pieces of %d: after %d bytes inFrame is %v", piece, end, s.inFrame())
			}
		}
		if len(heads) != 4 || len(heads[1]) != 8 || len(heads[0]) != 11 ||
			binary.BigEndian.Uint16(heads[3][9:11]) != 40 || binary.BigEndian.Uint16(heads[3][1:3]) != 3 {
			t.Errorf("pieces of %d: heads %x", piece, heads)
		}
	}
}

func TestFramedWritesGoBetweenAmqp091Frames(t *testing.T) {
	sock := &chunkedConn{}
	fc := framedWritable(sock, 1)
	theirs := frame(frameBody, 1, bytes.Repeat([]byte{'x'}, 100))
	ours := appendAck(nil, 1, 80, 7, false, false)
	if _, err := fc.Write(append([]byte(protocolHeader), theirs[:50]...)); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() { wrote <- fc.writeFrames(1, ours) }()
	select {
	case err := <-wrote:
		t.Fatalf("our frame went in the middle of amqp091-go's (%v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := fc.Write(theirs[50:]); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	// amqp091-go closes the channel: nothing more of ours goes on it.
	if _, err := fc.Write(frame(frameMethod, 1, method(20, 40, []byte{0, 200}, short(""), []byte{0, 0, 0, 0}))); err != nil {
		t.Fatal(err)
	}
	if err := fc.writeFrames(1, ours); err != amqp.ErrClosed {
		t.Errorf("an ack after channel.close: %v, want ErrClosed", err)
	}
	_ = fc.Close()
	want := append(append([]byte(protocolHeader), theirs...), ours...)
	if got := sock.bytes(); !bytes.HasPrefix(got, want) {
		t.Errorf("sent %x\nwant %x…", got, want)
	}
}

func TestFramedPublishOfALargeBodyIsBounded(t *testing.T) {
	// A body of many frames is queued as the writer drains, not whole:
	// what one write takes stays within maxPending and a frame.
	sock := &chunkedConn{}
	fc := framedWritable(sock, 1)
	pub := &fastPublisher{conn: fc, channel: 1, frameMax: 131072}
	body := bytes.Repeat([]byte{7}, 20<<20)
	if err := pub.publish("ex", "key", false, &amqp.Publishing{Body: body}); err != nil {
		t.Fatal(err)
	}
	_ = fc.Close()
	sent := sock.bytes()
	head := appendPublishHead(nil, 1, "ex", "key", false, &amqp.Publishing{Body: body})
	frames := (len(body) + 131072 - 9) / (131072 - 8)
	if len(sent) != len(head)+len(body)+8*frames || !bytes.HasPrefix(sent, head) {
		t.Errorf("sent %d bytes, want %d", len(sent), len(head)+len(body)+8*frames)
	}
	if sock.maxWrite > maxPending+131072 {
		t.Errorf("a write of %d bytes", sock.maxWrite)
	}
}

func TestConfirmTapCountsConfirmsPerFrame(t *testing.T) {
	type ack struct {
		tag      uint64
		multiple bool
	}
	for _, tc := range []struct {
		name  string
		acks  []ack
		sizes []int64
	}{
		{"one at a time", []ack{{1, false}, {2, false}, {3, false}}, []int64{1, 1, 1}},
		{"multiple", []ack{{4, true}, {5, false}, {9, true}}, []int64{4, 1, 4}},
		// A multiple ack covers only what is still unconfirmed.
		{"out of order", []ack{{3, false}, {5, false}, {6, true}, {7, false}}, []int64{1, 1, 4, 1}},
		{"nothing left", []ack{{2, true}, {1, true}}, []int64{2, 0}},
	} {
		var got []int64
		frames := &sync.Map{}
		tap := &confirmTap{record: func(n int64) { got = append(got, n) }, above: map[uint64]bool{}, frames: frames}
		for _, a := range tc.acks {
			tap.frame(a.tag, a.multiple, true)
		}
		if !reflect.DeepEqual(got, tc.sizes) {
			t.Errorf("%s: sizes %v, want %v", tc.name, got, tc.sizes)
		}
		// -v's lines: each frame that confirmed something, kept under the
		// first tag it confirms.
		kept := 0
		frames.Range(func(first, v any) bool {
			kept++
			if f := v.(confirmFrame); f.count < 1 || first.(uint64) > f.tag || !f.ack {
				t.Errorf("%s: frame %+v kept under %v", tc.name, f, first)
			}
			return true
		})
		want := 0
		for _, n := range tc.sizes {
			if n > 0 {
				want++
			}
		}
		if kept != want {
			t.Errorf("%s: %d frames kept, want %d", tc.name, kept, want)
		}
	}
	// On the wire: a confirm channel's acks are counted and still read by
	// amqp091-go.
	ackFrame := frame(frameMethod, 4, method(60, 80, u64(3), []byte{1}))
	sock := &chunkedConn{in: append([]byte(nil), ackFrame...), k: 5}
	fc := newFramedConn(sock)
	defer fc.Close()
	var got []int64
	fc.mu.Lock()
	fc.setTapLocked(4, channelTap{confirms: &confirmTap{record: func(n int64) { got = append(got, n) }, above: map[uint64]bool{}}})
	fc.mu.Unlock()
	passed, _ := io.ReadAll(fc)
	if !bytes.Equal(passed, ackFrame) || !reflect.DeepEqual(got, []int64{3}) {
		t.Errorf("passed %x, counted %v", passed, got)
	}
}

func TestChannelNumberReadsAmqp091(t *testing.T) {
	// Against the library release in go.mod: a release without the field
	// would leave every run on amqp091-go's own, slower, frames.
	env := testenv.RabbitMQ(t)
	conn, err := amqp.Dial(env.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for want := uint16(1); want <= 3; want++ {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := channelNumber(ch); !ok || n != want {
			t.Errorf("channel %d read as %d (%v)", want, n, ok)
		}
	}
}

func TestFramedPublishAndDeliveriesOnBroker(t *testing.T) {
	env := testenv.RabbitMQ(t)
	var framed *framedConn
	conn, err := amqp.DialConfig(env.URI, amqp.Config{FrameSize: 4096, Dial: func(network, addr string) (net.Conn, error) {
		c, err := amqp.DefaultDial(5*time.Second)(network, addr)
		if err != nil {
			return nil, err
		}
		framed = newFramedConn(c)
		return framed, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	plain, err := amqp.Dial(env.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	check, err := plain.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := check.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}

	// Our publish, as amqp091-go's consumer decodes it: every property,
	// headers of both types, a body over three frames.
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	pub := newFastPublisher(framed, conn, ch)
	if pub == nil {
		t.Fatal("no channel number")
	}
	sent := amqp.Publishing{
		ContentType: "text/plain", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 3,
		CorrelationId: "c", ReplyTo: "r", Expiration: "60000", MessageId: "m",
		Timestamp: time.Unix(1700000000, 0), Type: "t", UserId: "test", AppId: "a",
		Headers: amqp.Table{"timestamp": int64(42), "who": "perfclones"},
		Body:    bytes.Repeat([]byte("0123456789"), 1000),
	}
	if err := pub.publish("", q.Name, false, &sent); err != nil {
		t.Fatal(err)
	}
	got, err := check.Consume(q.Name, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var d amqp.Delivery
	select {
	case d = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("our publish never arrived")
	}
	if !bytes.Equal(d.Body, sent.Body) || d.ContentType != sent.ContentType || d.ContentEncoding != sent.ContentEncoding ||
		d.DeliveryMode != 2 || d.Priority != 3 || d.CorrelationId != "c" || d.ReplyTo != "r" || d.Expiration != "60000" ||
		d.MessageId != "m" || !d.Timestamp.Equal(sent.Timestamp) || d.Type != "t" || d.UserId != "test" || d.AppId != "a" ||
		!reflect.DeepEqual(d.Headers, sent.Headers) {
		t.Errorf("delivered %+v (body %d bytes)", d, len(d.Body))
	}
	if _, err := check.QueueDelete(q.Name, false, false, false); err != nil {
		t.Fatal(err)
	}

	// Deliveries framed off the socket, and our acks: the queue is empty
	// once its channel has closed (an unacknowledged message would be back).
	q, err = check.QueueDeclare("", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer check.QueueDelete(q.Name, false, false, false)
	const n = 50
	for i := 0; i < n; i++ {
		body := timestampBody(2000, int64(i))
		if err := check.PublishWithContext(t.Context(), "", q.Name, false, false, amqp.Publishing{Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	cch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	feed := newDeliveryFeed(framed, cch, q.Name)
	if _, err := cch.Consume(q.Name, "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	var all []fastDelivery
	for deadline := time.After(5 * time.Second); len(all) < n; {
		select {
		case <-feed.wake:
		case <-deadline:
			t.Fatalf("%d deliveries of %d", len(all), n)
		}
		for _, d := range feed.takeAll(nil) {
			all = append(all, d)
			_ = feed.Ack(d.tag, false)
		}
		feed.flushAcks()
	}
	for i, d := range all {
		if d.tag != uint64(i+1) || d.size != 2000 || !d.hasTS || d.ts != int64(i) || !d.ownKey {
			t.Fatalf("delivery %d: %+v", i, d)
		}
	}
	if err := cch.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := check.QueueDeclarePassive(q.Name, false, false, false, false, nil)
	if err != nil || st.Messages != 0 {
		t.Errorf("queue after our acks: %+v (%v)", st, err)
	}
	if err := feed.conn.writeFrames(feed.channel, appendAck(nil, feed.channel, 80, 1, false, false)); err != amqp.ErrClosed {
		t.Errorf("an ack on the closed channel: %v", err)
	}
}
