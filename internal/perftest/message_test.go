package perftest

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestScheduleCycles(t *testing.T) {
	s := newSchedule([]string{"100:2", "0:1", "50:3"})
	for _, tc := range []struct {
		at   time.Duration
		want int64
	}{
		{0, 100}, {1999 * time.Millisecond, 100}, {2 * time.Second, 0}, {2999 * time.Millisecond, 0},
		{3 * time.Second, 50}, {5999 * time.Millisecond, 50}, {6 * time.Second, 100}, {8500 * time.Millisecond, 0},
	} {
		if got := s.at(tc.at); got != tc.want {
			t.Errorf("at %s: %d, want %d", tc.at, got, tc.want)
		}
	}
	if newSchedule(nil) != nil {
		t.Error("no definition should give no schedule")
	}
}

func TestMessagePropertiesAndTheirErrors(t *testing.T) {
	for _, tc := range []struct {
		mp      string
		check   func(*amqp.Publishing) bool
		wantErr string
	}{
		{mp: "priority=5,deliveryMode=1,contentType=text/x,appId=perf,myheader=abc,num=42",
			check: func(p *amqp.Publishing) bool {
				return p.Priority == 5 && p.DeliveryMode == 1 && p.ContentType == "text/x" && p.AppId == "perf" &&
					p.Headers["myheader"] == "abc" && p.Headers["num"] == int64(42) && len(p.Headers) == 2
			}},
		{mp: "timestamp=2026-12-01T10:15:30+01:00,expiration=60000,messageId=m1,correlationId=c,replyTo=r,type=t,userId=test",
			check: func(p *amqp.Publishing) bool {
				return p.Timestamp.Equal(time.Date(2026, 12, 1, 9, 15, 30, 0, time.UTC)) && p.Expiration == "60000" &&
					p.MessageId == "m1" && p.CorrelationId == "c" && p.ReplyTo == "r" && p.Type == "t" && p.UserId == "test" && p.Headers == nil
			}},
		{mp: "timestamp=2026-12-01T10:15Z", check: func(p *amqp.Publishing) bool {
			return p.Timestamp.Equal(time.Date(2026, 12, 1, 10, 15, 0, 0, time.UTC))
		}},
		{mp: "priority=abc", wantErr: "java.lang.ClassCastException: class java.lang.String cannot be cast to class java.lang.Number (java.lang.String and java.lang.Number are in module java.base of loader 'bootstrap')"},
		{mp: "deliveryMode=x,priority=1", wantErr: "java.lang.ClassCastException: class java.lang.String cannot be cast to class java.lang.Number (java.lang.String and java.lang.Number are in module java.base of loader 'bootstrap')"},
		{mp: "timestamp=bad", wantErr: "java.time.format.DateTimeParseException: Text 'bad' could not be parsed at index 0"},
		{mp: "timestamp=2026-12-01", wantErr: "java.time.format.DateTimeParseException: Text '2026-12-01' could not be parsed at index 10"},
		{mp: "timestamp=2026-12-01T10:15", wantErr: "java.time.format.DateTimeParseException: Text '2026-12-01T10:15' could not be parsed at index 16"},
		{mp: "timestamp=2026-02-30T10:15Z", wantErr: "java.time.format.DateTimeParseException: Text '2026-02-30T10:15Z' could not be parsed: Invalid date 'FEBRUARY 30'"},
		{mp: "timestamp=2026-12-01T10:15Zx", wantErr: "java.time.format.DateTimeParseException: Text '2026-12-01T10:15Zx' could not be parsed, unparsed text found at index 17"},
		{mp: "timestamp=2026-12-01T10:15+1", wantErr: "java.time.format.DateTimeParseException: Text '2026-12-01T10:15+1' could not be parsed at index 16"},
		{mp: "timestamp=2026-13-01T10:15Z", wantErr: "java.time.format.DateTimeParseException: Text '2026-13-01T10:15Z' could not be parsed: Invalid value for MonthOfYear (valid values 1 - 12): 13"},
	} {
		m, err := newMessageProperties(keyValuePairs(tc.mp))
		if tc.wantErr != "" {
			var thrown *javaThrow
			if !errors.As(err, &thrown) || thrown.e.String() != tc.wantErr {
				t.Errorf("-mp %s: error %v, want %s", tc.mp, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("-mp %s: %v", tc.mp, err)
		}
		var p amqp.Publishing
		m.apply(&p)
		if !tc.check(&p) {
			t.Errorf("-mp %s: %+v", tc.mp, p)
		}
	}
}

func TestOutgoingMessages(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	if err := os.WriteFile(one, []byte("first body"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(two, []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("files in turn, content type and timestamp header", func(t *testing.T) {
		o, err := newOutgoing(outgoingSettings{bodies: bodySettings{kind: fileBodies, files: []string{one, two}, contentType: "text/plain"}, routingKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		for n, want := range []string{"first body", "second", "first body"} {
			msg, key, err := o.next(n, int64(1000+n))
			if err != nil || string(msg.Body) != want || key != "k" || msg.ContentType != "text/plain" || msg.Headers["timestamp"] != int64(1000+n) {
				t.Errorf("message %d: %q %q %v %+v", n, msg.Body, key, err, msg.Headers)
			}
		}
	})
	t.Run("a missing file", func(t *testing.T) {
		_, err := newOutgoing(outgoingSettings{bodies: bodySettings{kind: fileBodies, files: []string{one, filepath.Join(dir, "none")}}})
		var thrown *javaThrow
		if !errors.As(err, &thrown) || thrown.e.String() != "java.lang.IllegalArgumentException: "+filepath.Join(dir, "none")+" isn't a valid body file." {
			t.Errorf("error %v", err)
		}
	})
	t.Run("json pool", func(t *testing.T) {
		o, err := newOutgoing(outgoingSettings{bodies: bodySettings{kind: jsonBodies, fieldCount: 20, count: 3}, size: 500})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for n := range 50 {
			msg, _, _ := o.next(n, 7)
			var doc map[string]string
			if err := json.Unmarshal(msg.Body, &doc); err != nil || len(msg.Body) < 500 || !strings.HasPrefix(string(msg.Body), `{ "`) {
				t.Fatalf("body %q: %v", msg.Body, err)
			}
			if msg.ContentType != "application/json" || msg.Headers["timestamp"] != int64(7) {
				t.Errorf("properties %+v", msg)
			}
			seen[string(msg.Body)] = true
		}
		if len(seen) > 3 {
			t.Errorf("%d distinct bodies from a pool of 3", len(seen))
		}
		if _, err := newOutgoing(outgoingSettings{bodies: bodySettings{kind: jsonBodies, fieldCount: 0, count: 3}}); err == nil ||
			err.Error() != "java.util.NoSuchElementException" {
			t.Errorf("-bfc 0: %v", err)
		}
		o, _ = newOutgoing(outgoingSettings{bodies: bodySettings{kind: jsonBodies, fieldCount: 5, count: 0}})
		if _, _, err := o.next(0, 1); err == nil || err.Error() != "bound must be positive" {
			t.Errorf("-bc 0: %v", err)
		}
	})
	t.Run("time sequence with variable size", func(t *testing.T) {
		o, _ := newOutgoing(outgoingSettings{size: 20, sizes: newSchedule([]string{"100:1", "5:1"})})
		o.begin(time.Now())
		msg, _, _ := o.next(3, 99)
		if len(msg.Body) != 100 || binary.BigEndian.Uint32(msg.Body[0:4]) != 3 || binary.BigEndian.Uint64(msg.Body[4:12]) != 99 {
			t.Errorf("first second: %d bytes %x", len(msg.Body), msg.Body[:12])
		}
		o.begin(time.Now().Add(-1500 * time.Millisecond))
		if msg, _, _ := o.next(4, 99); len(msg.Body) != 12 {
			t.Errorf("second second: %d bytes, want the 12-byte minimum", len(msg.Body))
		}
	})
	t.Run("routing key cache", func(t *testing.T) {
		o, _ := newOutgoing(outgoingSettings{keyCache: 3, routingKey: "fixed"})
		var keys []string
		for n := range 7 {
			_, key, _ := o.next(n, 0)
			keys = append(keys, key)
		}
		if keys[0] == keys[1] || keys[1] == keys[2] || keys[0] == keys[2] || keys[3] != keys[0] || keys[4] != keys[1] || keys[6] != keys[0] || len(keys[0]) != 36 {
			t.Errorf("keys %v", keys)
		}
		o, _ = newOutgoing(outgoingSettings{randomKey: true})
		if _, a, _ := o.next(0, 0); func() bool { _, b, _ := o.next(1, 0); return a == b }() {
			t.Error("-K without a cache repeated a key")
		}
	})
}

func TestVerboseDetails(t *testing.T) {
	body := make([]byte, 20)
	binary.BigEndian.PutUint32(body[0:4], 7)
	binary.BigEndian.PutUint64(body[4:12], 12345)
	for _, tc := range []struct {
		msg   amqp.Publishing
		ts    int64
		order []string
		want  string
	}{
		{amqp.Publishing{Body: body}, 12345, nil, "properties = {}, body = [sequence = 7, timestamp = 12345]"},
		{amqp.Publishing{ContentType: "text/plain", Headers: amqp.Table{"timestamp": int64(5)}, Body: []byte("hello")}, 5, []string{"timestamp"},
			"properties = {content-type = text/plain, headers = {timestamp = 5}}, body = hello"},
		// The jar prints these headers in this (HashMap) order.
		{amqp.Publishing{ContentType: "text/x", Headers: amqp.Table{"myheader": "abc", "num": int64(42)}, DeliveryMode: 2, Priority: 5, Body: []byte("x")},
			0, publishedHeaderOrder(false, []string{"myheader", "num"}), "properties = {content-type = text/x, headers = {num = 42, myheader = abc}, delivery-mode = 2, priority = 5}, body = x"},
		{amqp.Publishing{Body: nil}, 0, nil, "properties = {}, body = null"},
	} {
		if got := verboseDetails(tc.ts, &tc.msg, tc.order); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// TestHeaderOrderIsJavas: the orders PerfTest 2.22.1's jar printed for
// -B ... -mp myheader=abc,num=42 (publisher, then consumer), and Java
// HashMaps that outgrow their first table.
func TestHeaderOrderIsJavas(t *testing.T) {
	if got := strings.Join(publishedHeaderOrder(true, []string{"myheader", "num"}), ","); got != "timestamp,num,myheader" {
		t.Errorf("published %s", got)
	}
	h := amqp.Table{"myheader": "abc", "num": int64(42), "timestamp": int64(1)}
	if got := strings.Join(receivedHeaderOrder(true, h), ","); got != "num,timestamp,myheader" {
		t.Errorf("received %s", got)
	}
	if got := strings.Join(publishedHeaderOrder(false, []string{"myheader", "num"}), ","); got != "num,myheader" {
		t.Errorf("published without a timestamp header %s", got)
	}
	// new HashMap() then 13 puts: the 13th doubles the table of 16 and its
	// threshold of 12.
	m := &javaHashMap{}
	var keys []string
	for i := range 13 {
		keys = append(keys, fmt.Sprintf("k%d", i))
		m.put(keys[i])
	}
	if m.capacity != 32 || m.limit != 24 {
		t.Errorf("13 keys: capacity %d, threshold %d; Java has 32 and 24", m.capacity, m.limit)
	}
}
