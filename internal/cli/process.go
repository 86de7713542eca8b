package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Signal is the cause of a run's context when SIGINT or SIGTERM ended it.
type Signal struct{ Sig syscall.Signal }

func (s Signal) Error() string { return "received " + s.Sig.String() }

// ExitCode is the status a process killed by the signal reports to its
// shell (128 + the signal's number), which the originals' JVMs and C
// programs exit with when a signal ends them.
func (s Signal) ExitCode() int { return 128 + int(s.Sig) }

// Interrupted reports whether ctx ended by a signal, and the exit code the
// original reports for it.
func Interrupted(ctx context.Context) (code int, ok bool) {
	var sig Signal
	if errors.As(context.Cause(ctx), &sig) {
		return sig.ExitCode(), true
	}
	return 0, false
}

// startProfile, set only in a build with the cpuprofile tag (profile.go),
// starts a CPU profile and returns what ends and writes it. Release
// builds have neither the hook nor runtime/pprof.
var startProfile func() (stop func())

// graceAfterSignal is how long a tool may take to stop and write its
// result file after SIGINT or SIGTERM before the process ends regardless.
const graceAfterSignal = 10 * time.Second

// Tool is one command of the module as cmd/ binaries and the multi-call
// binary see it.
type Tool struct {
	// Name is the original's command name; Aliases are the other names it
	// answers to in the multi-call binary (the vendor scripts' names).
	Name    string
	Aliases []string
	// About is one line for perfclones' tool list.
	About string
	Main  MainFunc
	// IgnoreSignals are signals the original ignores (redis-benchmark: a
	// closed pipe or a hang-up does not end the run).
	IgnoreSignals []os.Signal
	// DiesBySignal is set for C originals, which SIGINT and SIGTERM kill
	// (their parent sees a signal death, not an exit status). After Main
	// returns from such a signal, the process kills itself with it; a JVM
	// instead exits with status 128 + the signal's number.
	DiesBySignal bool
	// Layout is where the vendor's distribution keeps the tool's names,
	// so that users' command lines (cd kafka/bin && ./kafka-producer-perf-test.sh
	// ...) run unchanged from inside the tree `perfclones install` writes
	// and the dist archive holds. Every tool also gets bin/<Name>.
	Layout []Entry
}

// Entry is one name a tool has in its vendor's distribution: a symbolic
// link to the perfclones binary, a small sh script that runs it, or a
// directory of files the tool ships.
type Entry struct {
	// Path is where the distribution keeps the name, slash-separated and
	// relative to the top of the tree: "kafka/bin/kafka-producer-perf-test.sh".
	// A link's base name must be the tool's Name or one of its Aliases,
	// since that is how the binary knows which tool it is.
	Path string
	// Script makes the entry an sh script that runs perfclones with the
	// tool's Name, Args and then the script's own arguments, instead of a
	// link. A link serves names that users run directly (./redis-benchmark);
	// where the original is a script that users also run with sh or bash
	// (sh producer.sh, bash kafka-producer-perf-test.sh), which cannot read a
	// binary, it must be a script.
	Script bool
	// Args come between the tool's Name and the user's arguments in a
	// script (a mode, such as "producer").
	Args []string
	// Background makes a script start the tool in the background and
	// return at once with status 0, the output following, as vendor
	// scripts that end their command with & do.
	Background bool
	// Files, when set, makes the entry a directory: the whole of Files is
	// written under Path (a web page's assets, example specifications).
	Files fs.FS
}

// Process runs the tool's Main as the whole process: os.Args, the process's streams
// and environment, and a context that SIGINT or SIGTERM cancels with a
// Signal cause, so the tool stops, writes its result file and returns the
// code it chooses (Interrupted gives the original's). A second signal, or
// a tool that has not returned within graceAfterSignal, ends the process
// at once with that code.
func Process(tool Tool, args []string) {
	stopProfile := func() {}
	if startProfile != nil {
		stopProfile = startProfile()
	}
	if len(tool.IgnoreSignals) > 0 {
		signal.Ignore(tool.IgnoreSignals...)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		first := (<-sigs).(syscall.Signal)
		cause := Signal{Sig: first}
		cancel(cause)
		select {
		case <-sigs:
		case <-time.After(graceAfterSignal):
			fmt.Fprintf(os.Stderr, "perfclones: still stopping %s after %s; exiting\n", cause, graceAfterSignal)
		}
		stopProfile()
		os.Exit(cause.ExitCode())
	}()
	code := tool.Main(ctx, args, OS())
	stopProfile()
	var sig Signal
	if tool.DiesBySignal && errors.As(context.Cause(ctx), &sig) {
		signal.Reset(sig.Sig)
		_ = syscall.Kill(os.Getpid(), sig.Sig)
		time.Sleep(time.Second) // the signal is delivered meanwhile
	}
	cancel(nil)
	os.Exit(code)
}
