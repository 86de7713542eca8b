package perftest

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawSocket reads and writes a TCP socket with raw system calls, outside
// the runtime's system call bookkeeping. Go's sockets are non-blocking,
// so a read or write returns at once (EAGAIN when it would block, and
// then the runtime's poller waits, as for any socket). But each ordinary
// call enters and leaves a system call state: a run holds GOMAXPROCS at
// one thread for two agents, and a loopback write (which does the
// receiver's TCP work too) outlasts the 20 µs after which the runtime's
// monitor hands the thread's work to another thread. Per message that was
// several thread switches, more CPU than the messages themselves.
type rawSocket struct {
	*net.TCPConn
	raw syscall.RawConn
}

// newRawSocket wraps c when it is a TCP socket; else returns c.
func newRawSocket(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &rawSocket{TCPConn: tc, raw: raw}
}

func (s *rawSocket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := s.raw.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // the poller waits for data
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, s.opError("read", err)
	case errno != 0:
		return 0, s.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (s *rawSocket) Write(p []byte) (int, error) {
	written := 0
	var errno syscall.Errno
	err := s.raw.Write(func(fd uintptr) bool {
		for written < len(p) {
			rest := p[written:]
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
			switch e {
			case 0:
				written += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // the poller waits for room
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return written, s.opError("write", err)
	case errno != 0:
		return written, s.opError("write", os.NewSyscallError("write", errno))
	}
	return written, nil
}

// opError is the error net's own Read and Write would return (the raw
// connection's own errors name its raw-read or raw-write).
func (s *rawSocket) opError(op string, err error) error {
	var raw *net.OpError
	if errors.As(err, &raw) {
		err = raw.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: err}
}
