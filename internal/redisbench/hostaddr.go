package redisbench

import (
	"net"
	"strings"
)

// numericHost is the address the C tool's getaddrinfo(3) takes a host
// string to be without asking a resolver: an IPv6 literal, or an IPv4
// address in any form glibc's inet_aton accepts exactly ("127.1",
// "2130706433", "0x7f000001", "0177.0.0.1"). A host that is neither is a
// name and goes to the resolver, as in C; a numeric form never does.
func numericHost(host string) (net.IP, bool) {
	if strings.Contains(host, ":") {
		if ip := net.ParseIP(host); ip != nil {
			return ip, true
		}
		return nil, false
	}
	return inetAton(host)
}

// inetAton is glibc's inet_aton without trailing text: one to four parts
// separated by dots, each decimal, octal (leading 0) or hexadecimal
// (leading 0x); the last part fills the bytes the others leave (a, a.b with
// b 24 bits, a.b.c with c 16 bits, a.b.c.d).
func inetAton(s string) (net.IP, bool) {
	if s == "" {
		return nil, false
	}
	var parts []uint64
	for _, p := range strings.Split(s, ".") {
		v, ok := atonPart(p)
		if !ok {
			return nil, false
		}
		parts = append(parts, v)
	}
	if len(parts) > 4 {
		return nil, false
	}
	last := parts[len(parts)-1]
	for _, v := range parts[:len(parts)-1] {
		if v > 0xff {
			return nil, false
		}
	}
	limit := []uint64{0xffffffff, 0xffffff, 0xffff, 0xff}[len(parts)-1]
	if last > limit {
		return nil, false
	}
	var addr uint64
	for i, v := range parts[:len(parts)-1] {
		addr |= v << (24 - 8*uint(i))
	}
	addr |= last
	return net.IPv4(byte(addr>>24), byte(addr>>16), byte(addr>>8), byte(addr)), true
}

// atonPart reads one part as inet_aton does: it must start with a digit;
// "0x" switches to hexadecimal and a leading 0 to octal (where 8 and 9 are
// refused); values beyond 32 bits are refused.
func atonPart(p string) (uint64, bool) {
	if p == "" || p[0] < '0' || p[0] > '9' {
		return 0, false
	}
	base, digits := uint64(10), p
	switch {
	case len(p) > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, digits = 16, p[2:]
	case p[0] == '0':
		base, digits = 8, p[1:]
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		v = v*base + d
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}
