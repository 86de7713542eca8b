package kafkaperf

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/perfclones/perfclones/internal/javaprops"
	"github.com/perfclones/perfclones/internal/jvm"
)

// What the Java tools do with the files and arguments they are given,
// before any client exists.

// propsFileError says why a properties file could not be read, in the
// terms of the Java classes that read it.
type propsFileError struct {
	missing, directory bool
	malformed          bool // a \u escape without four hex digits
}

// hasMalformedEscape reports a \u escape without four hex digits after
// it, which Properties.load refuses with "Malformed \uxxxx encoding.".
func hasMalformedEscape(line string) bool {
	for i := 0; i < len(line); i++ {
		if line[i] != '\\' || i+1 >= len(line) {
			continue
		}
		i++ // the escaped character
		if line[i] != 'u' {
			continue
		}
		if len(line)-(i+1) < 4 {
			return true
		}
		for _, c := range line[i+1 : i+5] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return true
			}
		}
	}
	return false
}

// loadPropsFile reads a --producer.config, --consumer.config or
// --command-config file. An empty path is the working directory, as
// for Java's file classes.
func loadPropsFile(path string) (*javaprops.Properties, *propsFileError) {
	if path == "" {
		path = "."
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &propsFileError{missing: true}
	case err == nil && st.IsDir():
		return nil, &propsFileError{directory: true}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &propsFileError{missing: true}
	}
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimLeft(line, " \t\f")
		if t == "" || t[0] == '#' || t[0] == '!' {
			continue
		}
		if hasMalformedEscape(t) {
			return nil, &propsFileError{malformed: true}
		}
	}
	props, err := javaprops.Load(strings.NewReader(string(data)))
	if err != nil {
		return nil, &propsFileError{missing: true}
	}
	return props, nil
}

// malformedEscape is Properties.load's refusal of a bad \u escape.
var malformedEscape = jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: `Malformed \uxxxx encoding.`}
