package javaopts

import (
	"strconv"
	"strings"
)

// Exit is how a command line ends without a usable result: the text the
// original prints on each stream and the code it exits with. Parse
// functions return it as their error; the caller writes Stdout and Stderr
// as they are and returns Code from its Main.
type Exit struct {
	Code   int
	Stdout string
	Stderr string
}

func (e *Exit) Error() string {
	text := e.Stderr
	if text == "" {
		text = e.Stdout
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "error: ") {
			return strings.TrimSpace(line)
		}
	}
	if line, _, _ := strings.Cut(text, "\n"); line != "" {
		return line
	}
	return "exit status " + strconv.Itoa(e.Code)
}
