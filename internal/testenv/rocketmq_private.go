package testenv

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// PrivateRocketMQ is a name server and a broker of the test's own, started
// inside the harness's network namespace on ports no other group uses, so
// that a test may kill, pause and restart the broker. The broker
// advertises an address on the namespace's host side (10.213.0.1) where a
// Toxiproxy proxy forwards to it: every client connection to the broker
// goes through Proxy, and toxics on it are faults between client and
// broker. Both are killed when the test ends.
//
// The broker has one send thread and a send queue of SendQueue requests,
// so that a burst of concurrent senders overflows it and gets the
// broker's SYSTEM_BUSY replies, while a run with a few senders never does.
type PrivateRocketMQ struct {
	// Namesrv is the name server's address, for -n.
	Namesrv string
	// BrokerDirect is the broker's own address inside the namespace (for
	// the tests' admin requests, which bypass the proxy); BrokerAdvertised
	// the address the name server hands to clients, where Proxy listens.
	BrokerDirect, BrokerAdvertised string
	Proxy                          *toxiproxy.Proxy
	NamesrvProc, Broker            *Proc
	// SendQueue is the capacity of the broker's send queue.
	SendQueue int
}

const (
	rmqNetnsIP     = "10.213.0.2"
	rmqNetnsHostIP = "10.213.0.1"
	// Ports of private groups: 9926/11011 (the broker also takes the port
	// two below and one above its own).
	rmqPrivateNamesrvPort = 9926
	rmqPrivateBrokerPort  = 11011
	rmqPrivateSendQueue   = 4
)

// StartPrivateRocketMQ boots the private group (10-40 s on a loaded
// machine: both JVMs start at once, the broker retries its name server).
func StartPrivateRocketMQ(t testing.TB) *PrivateRocketMQ {
	t.Helper()
	v := need(t, "rocketmq", "PERF_ROCKETMQ_LIB", "PERF_ROCKETMQ_NETNS")
	lib, netns := v["PERF_ROCKETMQ_LIB"], v["PERF_ROCKETMQ_NETNS"]
	if st, err := os.Stat(lib); err != nil || !st.IsDir() {
		unavailable(t, "rocketmq", "PERF_ROCKETMQ_LIB=%s is not a directory", lib)
	}
	java := needProgram(t, "rocketmq", "java")
	ip := needProgram(t, "rocketmq", "ip")
	tox := Toxiproxy(t)

	r := &PrivateRocketMQ{
		Namesrv:          net.JoinHostPort(rmqNetnsIP, strconv.Itoa(rmqPrivateNamesrvPort)),
		BrokerDirect:     net.JoinHostPort(rmqNetnsIP, strconv.Itoa(rmqPrivateBrokerPort)),
		BrokerAdvertised: net.JoinHostPort(rmqNetnsHostIP, strconv.Itoa(rmqPrivateBrokerPort)),
		SendQueue:        rmqPrivateSendQueue,
	}
	for _, a := range []string{r.Namesrv, r.BrokerDirect, r.BrokerAdvertised} {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Fatalf("rocketmq: %s is in use: another private group is running", a)
		}
	}
	r.Proxy = tox.ProxyAt(t, r.BrokerAdvertised, r.BrokerDirect)

	dir := privateDir(t, "rocketmq")
	jvm := func(heap []string, class, conf string) []string {
		argv := []string{ip, "netns", "exec", netns, java}
		argv = append(argv, heap...)
		return append(argv, "-XX:+UseG1GC", "-Duser.home="+dir, "-Drocketmq.home.dir="+dir,
			"-Dlogback.statusListenerClass=org.apache.rocketmq.logging.ch.qos.logback.core.status.NopStatusListener",
			"-cp", filepath.Join(lib, "*"), class, "-c", filepath.Join(dir, conf))
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("namesrv.conf", fmt.Sprintf("listenPort=%d\nbindAddress=%s\n", rmqPrivateNamesrvPort, rmqNetnsIP))
	write("broker.conf", strings.Join([]string{
		"brokerClusterName=PrivateCluster",
		"brokerName=broker-p",
		"brokerId=0",
		"brokerRole=ASYNC_MASTER",
		"flushDiskType=ASYNC_FLUSH",
		"namesrvAddr=" + r.Namesrv,
		"listenPort=" + strconv.Itoa(rmqPrivateBrokerPort),
		"brokerIP1=" + rmqNetnsHostIP,
		"storePathRootDir=" + filepath.Join(dir, "store"),
		"storePathCommitLog=" + filepath.Join(dir, "store", "commitlog"),
		"mappedFileSizeCommitLog=33554432",
		"mappedFileSizeConsumeQueue=600000",
		"autoCreateTopicEnable=true",
		"sendMessageThreadPoolNums=1",
		"sendThreadPoolQueueCapacity=" + strconv.Itoa(rmqPrivateSendQueue),
		"",
	}, "\n"))
	broker := jvm([]string{"-Xms256m", "-Xmx256m", "-XX:MaxDirectMemorySize=256m", "-XX:TieredStopAtLevel=1"},
		"org.apache.rocketmq.broker.BrokerStartup", "broker.conf")
	namesrv := jvm([]string{"-Xms96m", "-Xmx96m", "-XX:TieredStopAtLevel=1"},
		"org.apache.rocketmq.namesrv.NamesrvStartup", "namesrv.conf")

	start := time.Now()
	done := make(chan error, 1)
	go func() {
		var err error
		r.NamesrvProc, err = launchProc(t, "namesrv", dir, namesrv, 60*time.Second, func() error { return dialOK(r.Namesrv) })
		done <- err
	}()
	r.Broker = startProc(t, "broker", dir, broker, 90*time.Second, func() error { return r.brokerReady(filepath.Join(dir, "broker.log")) })
	if err := <-done; err != nil {
		t.Fatalf("rocketmq name server: %v", err)
	}
	t.Logf("private RocketMQ group up in %s (name server %s, broker %s advertised as %s)",
		time.Since(start).Round(100*time.Millisecond), r.Namesrv, r.BrokerDirect, r.BrokerAdvertised)
	return r
}

func dialOK(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return err
	}
	return c.Close()
}

// brokerReady: the broker logged its boot and registered with the name
// server (a route query for the default topic finds it).
func (r *PrivateRocketMQ) brokerReady(log string) error {
	b, _ := os.ReadFile(log)
	if !bytes.Contains(b, []byte("boot success")) {
		return errNotYet
	}
	return dialOK(r.BrokerDirect)
}

// RestartBroker starts the killed broker again on its store and waits for
// it to boot (safe in any goroutine: it returns the error).
func (r *PrivateRocketMQ) RestartBroker() error {
	r.Broker.Kill()
	_ = os.Truncate(r.Broker.log, 0)
	return r.Broker.start(90 * time.Second)
}

// CreateTopic makes topic with queues read and write queues on the broker
// and waits until the name server routes it.
func (r *PrivateRocketMQ) CreateTopic(t testing.TB, topic string, queues int) {
	t.Helper()
	q := strconv.Itoa(queues)
	if _, err := rmqRequest(r.BrokerDirect, 17, map[string]string{
		"topic": topic, "defaultTopic": "TBW102", "readQueueNums": q, "writeQueueNums": q,
		"perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
	}); err != nil {
		t.Fatalf("rocketmq: create topic %s: %v", topic, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := rmqRequest(r.Namesrv, 105, map[string]string{"topic": topic})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("rocketmq: the name server does not route %s: %v", topic, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// MaxOffsets is the sum over the topic's queues 0..queues-1 of the
// broker's max offsets: how many messages it stored.
func (r *PrivateRocketMQ) MaxOffsets(t testing.TB, topic string, queues int) int64 {
	t.Helper()
	var sum int64
	for q := range queues {
		ext, err := rmqRequest(r.BrokerDirect, 30, map[string]string{"topic": topic, "queueId": strconv.Itoa(q)})
		if err != nil {
			t.Fatalf("rocketmq: max offset of %s/%d: %v", topic, q, err)
		}
		n, err := strconv.ParseInt(ext["offset"], 10, 64)
		if err != nil {
			t.Fatalf("rocketmq: max offset of %s/%d: %q", topic, q, ext["offset"])
		}
		sum += n
	}
	return sum
}

// ConsumerOffsets is the sum over the topic's queues 0..queues-1 of the
// offsets the broker holds for group (what the group's consumers
// committed: the broker's count of the messages it delivered and saw
// consumed). A queue the group never committed counts 0.
func (r *PrivateRocketMQ) ConsumerOffsets(t testing.TB, group, topic string, queues int) int64 {
	t.Helper()
	var sum int64
	for q := range queues {
		code, ext, err := rmqCall(r.BrokerDirect, 14, map[string]string{"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(q)})
		if err != nil {
			t.Fatalf("rocketmq: consumer offset of %s on %s/%d: %v", group, topic, q, err)
		}
		if code == rmqQueryNotFound {
			continue
		}
		n, err := strconv.ParseInt(ext["offset"], 10, 64)
		if code != 0 || err != nil {
			t.Fatalf("rocketmq: consumer offset of %s on %s/%d: code %d, offset %q", group, topic, q, code, ext["offset"])
		}
		sum += n
	}
	return sum
}

// rmqQueryNotFound is QUERY_NOT_FOUND: no offset for the group and queue.
const rmqQueryNotFound = 22

var rmqOpaque atomic.Int32

// rmqRequest sends one request of RocketMQ's remoting protocol (JSON
// headers) to addr and returns the reply's extFields; a reply code other
// than 0 is an error.
func rmqRequest(addr string, code int, ext map[string]string) (map[string]string, error) {
	rc, reply, err := rmqCall(addr, code, ext)
	if err == nil && rc != 0 {
		err = fmt.Errorf("code %d: %s", rc, reply["remark"])
	}
	if err != nil {
		return nil, err
	}
	return reply, nil
}

// rmqCall is rmqRequest that returns the reply's code instead of failing
// on one other than 0 (the remark is in the returned map as "remark"
// when the code is not 0).
func rmqCall(addr string, code int, ext map[string]string) (int, map[string]string, error) {
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return 0, nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	opaque := rmqOpaque.Add(1)
	hdr, err := json.Marshal(map[string]any{
		"code": code, "language": "GO", "version": 453, "opaque": opaque, "flag": 0,
		"extFields": ext, "serializeTypeCurrentRPC": "JSON",
	})
	if err != nil {
		return 0, nil, err
	}
	frame := make([]byte, 8, 8+len(hdr))
	binary.BigEndian.PutUint32(frame, uint32(4+len(hdr)))
	binary.BigEndian.PutUint32(frame[4:], uint32(len(hdr)))
	if _, err := c.Write(append(frame, hdr...)); err != nil {
		return 0, nil, err
	}
	var head [8]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return 0, nil, err
	}
	total := binary.BigEndian.Uint32(head[:4])
	hlen := binary.BigEndian.Uint32(head[4:]) & 0xffffff
	if total < 4+hlen || total > 64<<20 {
		return 0, nil, fmt.Errorf("bad reply frame (%d, %d)", total, hlen)
	}
	rest := make([]byte, total-4)
	if _, err := io.ReadFull(c, rest); err != nil {
		return 0, nil, err
	}
	var reply struct {
		Code      int               `json:"code"`
		Remark    string            `json:"remark"`
		ExtFields map[string]string `json:"extFields"`
	}
	if err := json.Unmarshal(rest[:hlen], &reply); err != nil {
		return 0, nil, fmt.Errorf("reply header: %v", err)
	}
	if reply.Code != 0 {
		reply.ExtFields = map[string]string{"remark": reply.Remark}
	}
	return reply.Code, reply.ExtFields, nil
}
