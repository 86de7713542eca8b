package testenv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/redis/go-redis/v9"
)

// Proc is a server process that a test started for itself, so that it may
// kill, pause and restart it without disturbing the shared servers of
// scripts/services. It runs in a process group of its own; the test's
// cleanup resumes and kills it, so none outlives the test.
type Proc struct {
	name  string
	argv  []string
	dir   string
	log   string
	ready func() error // nil once the server answers

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// startProc starts argv in dir (its output appended to dir/name.log) and
// waits up to boot for ready to return nil; a process that exits or does
// not become ready fails the test with the log's tail.
func startProc(t testing.TB, name, dir string, argv []string, boot time.Duration, ready func() error) *Proc {
	t.Helper()
	p, err := launchProc(t, name, dir, argv, boot, ready)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// launchProc is startProc returning the error (safe in any goroutine).
func launchProc(t testing.TB, name, dir string, argv []string, boot time.Duration, ready func() error) (*Proc, error) {
	p := &Proc{name: name, argv: argv, dir: dir, log: filepath.Join(dir, name+".log"), ready: ready}
	t.Cleanup(p.Kill)
	return p, p.start(boot)
}

func (p *Proc) start(boot time.Duration) error {
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	deadline := time.Now().Add(boot)
	for {
		err := p.ready()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited while starting: %s", p.tail())
		default:
		}
		if time.Now().After(deadline) {
			p.Kill()
			return fmt.Errorf("not ready after %s (%v): %s", boot, err, p.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tail is the end of the process's log, for failure messages.
func (p *Proc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Pid is the process id of the server (the group's leader).
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *Proc) signal(sig syscall.Signal) {
	if pid := p.Pid(); pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// Kill sends SIGKILL to the server's process group and waits for it to
// exit: a crash, with no chance to flush or say goodbye. Idempotent.
func (p *Proc) Kill() {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited == nil {
		return
	}
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
	}
}

// Pause stops the server with SIGSTOP: its sockets stay open and the
// kernel still accepts bytes, but nothing answers.
func (p *Proc) Pause() { p.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (p *Proc) Resume() { p.signal(syscall.SIGCONT) }

// Restart starts the server again, with the same command line and data
// directory, after Kill; it fails the test unless it is ready within boot.
func (p *Proc) Restart(t testing.TB, boot time.Duration) {
	t.Helper()
	p.Kill()
	if err := p.start(boot); err != nil {
		t.Fatalf("%s: restart: %v", p.name, err)
	}
}

// needProgram is the path of a program a private server needs; missing,
// the test fails under CI and is skipped otherwise.
func needProgram(t testing.TB, service, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		unavailable(t, service, "%s is not installed", name)
	}
	return path
}

// privateDir is a directory of the test's own under .services/private (or
// the test's temporary directory when there is no checkout), removed when
// the test ends.
func privateDir(t testing.TB, prefix string) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		return t.TempDir()
	}
	base := filepath.Join(root, ".services", "private")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, prefix+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// PrivateRedis is a redis-server of the test's own.
type PrivateRedis struct {
	// Addr is where it listens, a free port on 127.0.0.1.
	Addr string
	*Proc
}

// StartPrivateRedis starts redis-server on a free loopback port with a data
// directory of its own and the extra configuration args ("--appendonly",
// "yes", ...), and waits until it answers PING. It is killed when the test
// ends.
func StartPrivateRedis(t testing.TB, args ...string) *PrivateRedis {
	t.Helper()
	bin := needProgram(t, "redis", "redis-server")
	dir := privateDir(t, "redis")
	addr := freeLoopbackAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	argv := append([]string{bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--dir", dir, "--daemonize", "no"}, args...)
	r := &PrivateRedis{Addr: addr}
	r.Proc = startProc(t, "redis-server", dir, argv, 10*time.Second, func() error {
		c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
		defer c.Close()
		return c.Ping(t.Context()).Err()
	})
	return r
}

// Client is a go-redis client of the server (closed when the test ends).
func (r *PrivateRedis) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// ProxyAt is Proxy with a listen address of the caller's choosing, such as
// the harness namespace's host side where a server advertises an address
// that clients must reach through the proxy.
func (e ToxiproxyEnv) ProxyAt(t testing.TB, listen, upstream string) *toxiproxy.Proxy {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_").Replace(fmt.Sprintf("%s-%s", t.Name(), listen))
	c := toxiproxy.NewClient(e.API)
	p, err := c.CreateProxy(name, listen, upstream)
	if err != nil {
		t.Fatalf("toxiproxy: create %s -> %s: %v", listen, upstream, err)
	}
	t.Cleanup(func() { _ = p.Delete() })
	return p
}

// ClosedLoopbackAddr is a 127.0.0.1 address nothing listens on (a
// connection there is refused at once).
func ClosedLoopbackAddr(t testing.TB) string {
	t.Helper()
	return freeLoopbackAddr(t)
}

var errNotYet = errors.New("not yet")
