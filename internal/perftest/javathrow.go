package perftest

import "github.com/perfclones/perfclones/internal/jvm"

// javaThrow is an exception PerfTest's own code throws (an index out of
// bounds, a division by zero, a negative array size, a malformed message
// property or body file) on input it does not check; the catch-all in
// main.go prints it as any other. It sits below every file that throws one.
type javaThrow struct{ e jvm.Exception }

func (t *javaThrow) Error() string { return t.e.String() }
