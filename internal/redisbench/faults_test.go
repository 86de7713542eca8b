package redisbench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/result"
	"github.com/perfclones/perfclones/internal/result/resulttest"
)

// startPrivateRedis starts a redis-server of its own on a free loopback
// port, for tests that kill it. Without redis-server the test fails under
// CI and is skipped otherwise.
func startPrivateRedis(t *testing.T) (port int, kill func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed (scripts/services installs it)")
		}
		t.Skip("redis-server is not installed; run scripts/services start redis")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill = func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() }
	t.Cleanup(kill)
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return port, kill
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d did not start: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runMain runs Main in the background and returns its result once it ends.
func runMain(args ...string) (<-chan int, *bytes.Buffer, *bytes.Buffer) {
	return runMainEnv(nil, args...)
}

// runMainEnv is runMain with environment variables.
func runMainEnv(env map[string]string, args ...string) (<-chan int, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), args, cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: cli.Env(env)})
	}()
	return done, &stdout, &stderr
}

func TestServerDiesMidRun(t *testing.T) {
	for _, mode := range [][]string{{"-q"}, {"-q", "--threads", "2"}, {"-q", "-k", "0", "-c", "5"}, {"--csv", "-P", "16"}} {
		t.Run(strings.Join(mode, " "), func(t *testing.T) {
			port, kill := startPrivateRedis(t)
			args := append([]string{"-p", fmt.Sprint(port), "-n", "100000000", "-t", "set"}, mode...)
			path := filepath.Join(t.TempDir(), "result.json")
			done, _, stderr := runMainEnv(map[string]string{result.Env: path}, args...)
			time.Sleep(300 * time.Millisecond)
			killed := time.Now()
			kill()
			select {
			case rc := <-done:
				if rc != 1 {
					t.Errorf("exit code %d, want 1", rc)
				}
				if time.Since(killed) > 5*time.Second {
					t.Errorf("took %v to notice", time.Since(killed))
				}
				msg := strings.TrimSpace(stderr.String())
				lines := strings.Split(msg, "\n")
				last := lines[len(lines)-1]
				// A reconnecting client (-k 0) may find the port closed instead of a broken connection.
				if !strings.HasPrefix(last, "Error: ") && !strings.HasPrefix(last, "Could not connect to Redis at ") {
					t.Errorf("stderr = %q, want it to end with an error line", msg)
				}
				if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
					t.Errorf("stderr has a Go crash: %q", msg)
				}
				// The file keeps what was measured and says how it ended.
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				res, err := resulttest.Validate(b)
				if err != nil {
					t.Fatal(err)
				}
				if res.Ending != "failed" || res.ExitCode != 1 || res.Error != last || len(res.Tests) != 1 {
					t.Fatalf("ending %q exit %d error %q, %d tests", res.Ending, res.ExitCode, res.Error, len(res.Tests))
				}
				c := res.Tests[0].Counts
				if c.Operations == 0 || c.Failed() == 0 {
					t.Errorf("counts %+v: want the requests before the kill and the failure", c)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the run did not end after the server died")
			}
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	for _, extra := range [][]string{nil, {"--cluster"}, {"-I"}} {
		start := time.Now()
		done, stdout, stderr := runMain(append([]string{"-p", fmt.Sprint(port), "-n", "10"}, extra...)...)
		select {
		case rc := <-done:
			want := fmt.Sprintf("Could not connect to Redis at 127.0.0.1:%d: Connection refused\n", port)
			if rc != 1 || stderr.String() != want || stdout.Len() != 0 {
				t.Errorf("%v: rc %d stdout %q stderr %q, want 1 and %q", extra, rc, stdout, stderr, want)
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("%v: took %v", extra, time.Since(start))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: no exit", extra)
		}
	}
	done, _, stderr := runMain("-s", "/nonexistent/redis.sock", "-n", "1")
	if rc := <-done; rc != 1 || stderr.String() != "Could not connect to Redis at /nonexistent/redis.sock: No such file or directory\n" {
		t.Errorf("unix socket: rc %d stderr %q", rc, stderr)
	}
}

func TestIdleModeEndsWhenServerCloses(t *testing.T) {
	port, kill := startPrivateRedis(t)
	done, stdout, stderr := runMain("-p", fmt.Sprint(port), "-c", "3", "-I")
	time.Sleep(400 * time.Millisecond)
	kill()
	select {
	case rc := <-done:
		if rc != 1 || !strings.HasPrefix(stderr.String(), "Error: ") {
			t.Errorf("rc %d stderr %q", rc, stderr)
		}
		out := stdout.String()
		if !strings.HasPrefix(out, "Creating 3 idle connections and waiting forever (Ctrl+C when done)\nclients: 3\r") {
			t.Errorf("stdout = %q", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("idle mode did not end when the server went away")
	}
}
