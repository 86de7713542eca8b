// Package jvm writes what a Java original prints when it ends in ways
// only a JVM has: an uncaught exception in the main thread. The tools
// print the first line of the stack trace and the causes, not the frames.
package jvm

import (
	"strings"

	"github.com/perfclones/perfclones/internal/cli"
)

// Exception is a Java exception: its class (with package) and message.
type Exception struct {
	Class   string // "java.lang.IllegalArgumentException"
	Message string
}

// String is the exception as Throwable.toString() prints it: the class,
// and ": message" when there is one.
func (e Exception) String() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Class + ": " + e.Message
}

// Uncaught is how the JVM ends on an exception thrown out of main: stdout
// keeps what the tool printed before (stdoutBefore, whole lines), stderr
// gets `Exception in thread "main" <exception>` and a "Caused by: " line
// per cause, and the exit code is 1.
func Uncaught(e Exception, stdoutBefore []string, causes ...Exception) *cli.Exit {
	var b strings.Builder
	b.WriteString(`Exception in thread "main" ` + e.String() + "\n")
	for _, c := range causes {
		b.WriteString("Caused by: " + c.String() + "\n")
	}
	out := ""
	if len(stdoutBefore) > 0 {
		out = strings.Join(stdoutBefore, "\n") + "\n"
	}
	return &cli.Exit{Code: 1, Stdout: out, Stderr: b.String()}
}
