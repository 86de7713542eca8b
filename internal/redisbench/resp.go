package redisbench

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// errProtocol is a malformed reply; the C tool reports hiredis' "Protocol error" then.
var errProtocol = errors.New("Protocol error")

// replyReader reads RESP2/RESP3 replies from a connection through its own
// buffer. skip, the benchmark's hot path, walks a reply without allocating;
// value decodes one fully for the set-up commands.
type replyReader struct {
	rd   io.Reader
	buf  []byte
	r, w int // unread bytes are buf[r:w]
	// grow asks the next fill for a larger buffer (see fill).
	grow bool
	// lastType is the type byte of the last reply skip read ('>' for a RESP3 push).
	lastType byte
}

// maxReadBuffer is the largest a reply reader grows to by itself; a single
// reply larger than the buffer grows it regardless.
const maxReadBuffer = 64 * 1024

func newReplyReader(rd io.Reader) *replyReader {
	// Small to start: with thousands of connections (-c 5000) each one's
	// buffer is resident memory; fill doubles it when replies are larger.
	return &replyReader{rd: rd, buf: make([]byte, 512)}
}

// fill reads more bytes from the connection, compacting or growing the buffer first.
func (p *replyReader) fill() error {
	if p.r > 0 {
		n := copy(p.buf, p.buf[p.r:p.w])
		p.r, p.w = 0, n
	}
	if p.w == len(p.buf) || (p.grow && p.w < len(p.buf)/2) {
		p.grow = false
		nb := make([]byte, 2*len(p.buf))
		copy(nb, p.buf[:p.w])
		p.buf = nb
	}
	n, err := p.rd.Read(p.buf[p.w:])
	if n > 0 && n == len(p.buf)-p.w && len(p.buf) < maxReadBuffer && p.r == 0 && p.w == 0 {
		// The read filled the whole buffer: replies come in larger
		// bursts than it holds, so the next fill reads into one twice
		// the size (at most maxReadBuffer) instead of making more calls.
		p.grow = true
	}
	p.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// line returns the next CRLF-terminated line without its CRLF. The slice is
// valid until the next read.
func (p *replyReader) line() ([]byte, error) {
	start := 0
	for {
		for i := p.r + start; i+1 < p.w; i++ {
			if p.buf[i] == '\r' && p.buf[i+1] == '\n' {
				l := p.buf[p.r:i]
				p.r = i + 2
				return l, nil
			}
		}
		start = max(p.w-p.r-1, 0)
		if err := p.fill(); err != nil {
			return nil, err
		}
	}
}

// discard drops n bytes of a bulk payload plus its CRLF.
func (p *replyReader) discard(n int) error {
	n += 2
	for {
		avail := p.w - p.r
		if avail >= n {
			p.r += n
			return nil
		}
		n -= avail
		p.r, p.w = 0, 0
		if err := p.fill(); err != nil {
			return err
		}
	}
}

// parseLength reads the integer after a type byte.
func parseLength(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, errProtocol
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errProtocol
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// skip consumes one whole reply. When the reply is an error, its message is
// copied into errMsg; nested errors inside aggregates do not count, as in hiredis.
func (p *replyReader) skip() (errMsg string, isErr bool, err error) {
	pending := 1
	top := true
	for pending > 0 {
		l, err := p.line()
		if err != nil {
			return "", false, err
		}
		if len(l) == 0 {
			return "", false, errProtocol
		}
		pending--
		if top {
			p.lastType = l[0]
		}
		switch l[0] {
		case '+', ':', '_', ',', '#', '(':
		case '-', '!':
			if l[0] == '!' {
				n, err := parseLength(l[1:])
				if err != nil {
					return "", false, err
				}
				// A blob error's text follows like a bulk string.
				for p.w-p.r < n+2 {
					if err := p.fill(); err != nil {
						return "", false, err
					}
				}
				if top {
					errMsg, isErr = string(p.buf[p.r:p.r+n]), true
				}
				p.r += n + 2
				break
			}
			if top {
				errMsg, isErr = string(l[1:]), true
			}
		case '$', '=':
			n, err := parseLength(l[1:])
			if err != nil {
				return "", false, err
			}
			if n >= 0 {
				if err := p.discard(n); err != nil {
					return "", false, err
				}
			}
		case '*', '~', '>':
			n, err := parseLength(l[1:])
			if err != nil {
				return "", false, err
			}
			if n > 0 {
				pending += n
			}
		case '%', '|':
			n, err := parseLength(l[1:])
			if err != nil {
				return "", false, err
			}
			if n > 0 {
				pending += 2 * n
			}
			if l[0] == '|' {
				// An attribute precedes the real reply, which still has to be read.
				pending++
			}
		default:
			return "", false, errProtocol
		}
		top = false
	}
	return errMsg, isErr, nil
}

// replyError is an error reply decoded by value.
type replyError string

func (e replyError) Error() string { return string(e) }

// value decodes one reply: string for simple and bulk strings, int64,
// nil, []any for aggregates (maps flattened), and replyError for errors.
func (p *replyReader) value() (any, error) {
	l, err := p.line()
	if err != nil {
		return nil, err
	}
	if len(l) == 0 {
		return nil, errProtocol
	}
	switch l[0] {
	case '+':
		return string(l[1:]), nil
	case '-':
		return replyError(l[1:]), nil
	case ':':
		return strconv.ParseInt(string(l[1:]), 10, 64)
	case '_':
		return nil, nil
	case ',', '#', '(':
		return string(l[1:]), nil
	case '$', '=', '!':
		n, err := parseLength(l[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		for p.w-p.r < n+2 {
			if err := p.fill(); err != nil {
				return nil, err
			}
		}
		s := string(p.buf[p.r : p.r+n])
		p.r += n + 2
		if l[0] == '!' {
			return replyError(s), nil
		}
		return s, nil
	case '*', '~', '>', '%', '|':
		n, err := parseLength(l[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		if l[0] == '%' || l[0] == '|' {
			n *= 2
		}
		out := make([]any, 0, n)
		for range n {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if l[0] == '|' {
			return p.value()
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unexpected type byte %q", errProtocol, l[0])
}

// encodeCommand RESP-encodes a command as a multibulk request.
func encodeCommand(args []string) []byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return encodeArgs(b)
}

// encodeArgs RESP-encodes a command whose arguments are bytes.
func encodeArgs(args [][]byte) []byte {
	out := make([]byte, 0, 64)
	out = append(out, '*')
	out = strconv.AppendInt(out, int64(len(args)), 10)
	out = append(out, '\r', '\n')
	for _, a := range args {
		out = append(out, '$')
		out = strconv.AppendInt(out, int64(len(a)), 10)
		out = append(out, '\r', '\n')
		out = append(out, a...)
		out = append(out, '\r', '\n')
	}
	return out
}
