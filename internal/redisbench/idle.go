package redisbench

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// idle is -I: open the connections, send nothing, and print the number of
// live clients on every tick until interrupted. A connection that the server
// closes or resets ends the run with an error, as in the C tool since 7.0.
func (env *runEnv) idle() int {
	o := env.opts
	env.out.Write(fmt.Sprintf("Creating %d idle connections and waiting forever (Ctrl+C when done)\n", o.Clients))
	n := max(o.Clients, 1)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	failed := make(chan string, 1)
	for i := range n {
		ep := env.target
		if env.cluster != nil {
			ep = env.cluster.nodeForClient(i, env.threads).ep
		}
		c, err := env.dialer.dial(ep)
		if err != nil {
			env.errOut.Line(err.Error())
			return 1
		}
		conns = append(conns, c)
		go func() {
			// The clients send nothing, so anything but silence ends the run.
			_, err := c.Read(make([]byte, 512))
			msg := "Error: Server closed the connection"
			if err != nil && !errors.Is(err, io.EOF) {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				msg = "Error: " + strerror(err)
			}
			select {
			case failed <- msg:
			default:
			}
		}()
		if (i+1)%connectBurst == 0 && i+1 < n {
			time.Sleep(connectPause)
		}
	}
	wait := time.Duration(env.progress.nextTickMs-env.clock.nowMs()) * time.Millisecond
	timer := time.NewTimer(max(wait, 0))
	defer timer.Stop()
	for {
		select {
		case <-env.ctx.Done():
			return 130
		case msg := <-failed:
			env.errOut.Line(msg)
			return 1
		case <-timer.C:
			if !o.CSV {
				env.out.Write(fmt.Sprintf("clients: %d\r", len(conns)))
			}
			timer.Reset(tickMs * time.Millisecond)
		}
	}
}
