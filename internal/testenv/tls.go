package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TLSFiles are the certificates that scripts/lib/tls.sh makes for one test
// (see that file for what each one is). PEM unless the name says .p12;
// every PKCS12 store has the password StorePassword.
type TLSFiles struct {
	Dir string
	// CA signed every "good" certificate; CADir holds it under its OpenSSL
	// subject hash (for --cacertdir); WrongCA is an unrelated CA.
	CA, CADir, WrongCA string
	// ServerDNS names only DNS:localhost; ServerIP only IP:127.0.0.1.
	ServerDNSCert, ServerDNSKey string
	ServerIPCert, ServerIPKey   string
	// Client is a client certificate signed by CA, ClientWrong one signed
	// by WrongCA; ClientBundle is ClientKey and ClientCert in one file (a
	// PEM key store for Kafka's ssl.keystore.type=PEM).
	ClientCert, ClientKey, ClientBundle string
	ClientWrongCert, ClientWrongKey     string
	// Bad is a file that holds no certificate.
	Bad string
	// Truststore and WrongTruststore are PKCS12 trust stores of CA and
	// WrongCA (made by keytool, "" when it is missing); ClientKeystore is
	// the client's key and chain as PKCS12.
	Truststore, WrongTruststore, ClientKeystore string
	StorePassword                               string
}

// TLSCerts makes a fresh set of certificates in a directory of t's. Without
// openssl the test fails under CI and is skipped otherwise.
func TLSCerts(t testing.TB) TLSFiles {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		unavailable(t, "tls", "openssl is not installed")
		return TLSFiles{}
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "lib", "tls.sh"), "certs", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/lib/tls.sh certs: %v\n%s", err, out)
	}
	f := func(name string) string { return filepath.Join(dir, name) }
	files := TLSFiles{
		Dir: dir, CA: f("ca.pem"), CADir: f("cadir"), WrongCA: f("wrong-ca.pem"),
		ServerDNSCert: f("server-dns.pem"), ServerDNSKey: f("server-dns.key"),
		ServerIPCert: f("server-ip.pem"), ServerIPKey: f("server-ip.key"),
		ClientCert: f("client.pem"), ClientKey: f("client.key"), ClientBundle: f("client-bundle.pem"),
		ClientWrongCert: f("client-wrong.pem"), ClientWrongKey: f("client-wrong.key"),
		Bad: f("bad.pem"), ClientKeystore: f("client.p12"),
		StorePassword: "perfclones-store",
	}
	if _, err := os.Stat(f("truststore.p12")); err == nil {
		files.Truststore, files.WrongTruststore = f("truststore.p12"), f("wrong-truststore.p12")
	}
	return files
}

// RedisTLSServer is a private TLS-only redis-server for one test.
type RedisTLSServer struct {
	Addr string // 127.0.0.1:port of its TLS listener
	Port int
}

// StartRedisTLS starts a private redis-server that speaks only TLS on a free
// loopback port, presenting cert and key and, with authClients, requiring a
// client certificate signed by files.CA. It is stopped when t ends. Without
// redis-server the test fails under CI and is skipped otherwise; a server
// that does not start fails the test.
func StartRedisTLS(t testing.TB, files TLSFiles, cert, key string, authClients bool) RedisTLSServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		unavailable(t, "redis", "redis-server is not installed")
		return RedisTLSServer{}
	}
	auth := "no"
	if authClients {
		auth = "yes"
	}
	var lastErr error
	for range 3 { // a free port can be taken between probe and bind
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		cmd := exec.Command(bin,
			"--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", files.CA,
			"--tls-auth-clients", auth, "--save", "", "--appendonly", "no",
			"--dir", dir, "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("redis-server: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err := waitListening(addr, exited, 10*time.Second); err != nil {
			_ = cmd.Process.Kill()
			<-exited
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			lastErr = fmt.Errorf("%v\n%s", err, log)
			continue
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
		return RedisTLSServer{Addr: addr, Port: port}
	}
	t.Fatalf("redis-server with TLS did not start: %v", lastErr)
	return RedisTLSServer{}
}

// freePort is a loopback TCP port that nothing listened on a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ClosedPort is a loopback port that refuses connections (nothing listens).
func ClosedPort(t testing.TB) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitListening waits until addr accepts a TCP connection, the process
// behind exited ends, or timeout passes.
func waitListening(addr string, exited chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case werr := <-exited:
			exited <- werr
			return fmt.Errorf("the server exited: %v", werr)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not accept connections after %v", addr, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// KafkaTLSEnv is the private TLS Kafka node of scripts/lib/tls.sh, started
// for one test by StartKafkaTLS, with the certificates it presents.
type KafkaTLSEnv struct {
	// SSL presents ServerIP (security.protocol=SSL); SASLSSL the same with
	// SASL PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 for User and Password;
	// DNSOnly presents ServerDNS, whose name 127.0.0.1 does not verify;
	// MTLS requires a client certificate signed by Files.CA; Plaintext is
	// the broker's own listener.
	SSL, SASLSSL, DNSOnly, MTLS, Plaintext string
	User, Password                         string
	Files                                  TLSFiles
}

// The ports of the TLS Kafka node, as in scripts/lib/tls.sh.
const (
	kafkaTLSSSLPort   = 19892
	kafkaTLSSASLPort  = 19893
	kafkaTLSPlainPort = 19895
	kafkaTLSDNSPort   = 19896
	kafkaTLSMTLSPort  = 19897
)

// StartKafkaTLS starts the TLS Kafka node (one KRaft JVM with a small heap,
// formatted anew, with the SCRAM users) with the certificates of files, and
// stops it when t ends. It needs the jars of the shared Kafka service (see
// Kafka); when those are missing the test fails under CI and is skipped
// otherwise. A node that does not start fails the test.
func StartKafkaTLS(t testing.TB, files TLSFiles) KafkaTLSEnv {
	t.Helper()
	if lookup("PERF_KAFKA_LIB") == "" {
		unavailable(t, "kafka", "PERF_KAFKA_LIB not set")
		return KafkaTLSEnv{}
	}
	if _, err := exec.LookPath("java"); err != nil {
		unavailable(t, "kafka", "java is not installed")
		return KafkaTLSEnv{}
	}
	if files.Truststore == "" {
		unavailable(t, "kafka", "keytool is not installed (it makes the Java trust stores)")
		return KafkaTLSEnv{}
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "lib", "tls.sh")
	stop := func() {
		if out, err := exec.Command("bash", script, "kafka-stop").CombinedOutput(); err != nil {
			t.Errorf("scripts/lib/tls.sh kafka-stop: %v\n%s", err, out)
		}
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", script, "kafka-start", files.Dir)
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		stop()
		t.Fatalf("scripts/lib/tls.sh kafka-start: %v\n%s", err, stderr.String())
	}
	t.Cleanup(stop)
	addr := func(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)) }
	return KafkaTLSEnv{
		SSL: addr(kafkaTLSSSLPort), SASLSSL: addr(kafkaTLSSASLPort), DNSOnly: addr(kafkaTLSDNSPort),
		MTLS: addr(kafkaTLSMTLSPort), Plaintext: addr(kafkaTLSPlainPort),
		User: "alice", Password: "alice-secret", Files: files,
	}
}
