//go:build !linux

package perftest

import "net"

// newRawSocket is c itself where raw system calls are not written.
func newRawSocket(c net.Conn) net.Conn { return c }
