// Package testenv tells tests where the local servers started by
// scripts/services listen (Redis now; Kafka, RabbitMQ and RocketMQ as they
// come).
//
// Every value comes from a PERF_* variable: from the process environment when
// it is set and not empty, else from the export lines that scripts/services
// writes to .services/env at the module root. When a server a test needs is
// not there, the test fails if the CI variable is set, and is skipped (with a
// hint to run scripts/services start) otherwise.
//
// To add a service: a struct of its values and a function like Redis that
// calls need for the variables, unavailable for anything else that is wrong,
// and reachable for its addresses.
package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// ModuleRoot returns the nearest directory at or above the working directory
// that holds go.mod (go test runs each package in its own directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testenv: no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// source is where lookup reads variables: the process environment first,
// then the parsed .services/env.
type source struct {
	getenv func(string) (string, bool)
	file   map[string]string
}

func (s source) lookup(name string) string {
	if v, ok := s.getenv(name); ok && v != "" {
		return v
	}
	return s.file[name]
}

// servicesEnv is .services/env, read once per test binary. A missing file is
// an empty map; a file that cannot be read or parsed is an error.
var servicesEnv = sync.OnceValues(func() (map[string]string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return map[string]string{}, nil
	}
	path := filepath.Join(root, ".services", "env")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars, err := parseEnv(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vars, nil
})

// lookup returns the value of the variable name, or "" when it is set
// nowhere (or .services/env cannot be parsed: need reports that).
func lookup(name string) string {
	file, err := servicesEnv()
	if err != nil {
		file = nil
	}
	return source{getenv: os.LookupEnv, file: file}.lookup(name)
}

// need returns the values of names for the service (a word such as "redis",
// used in messages and in the hint "scripts/services start <service>"). If
// any is empty it stops the test through unavailable; a .services/env that
// cannot be parsed fails the test in any case.
func need(t testing.TB, service string, names ...string) map[string]string {
	t.Helper()
	if _, err := servicesEnv(); err != nil {
		t.Fatalf("testenv: %v", err)
		return nil
	}
	vals := make(map[string]string, len(names))
	var missing []string
	for _, name := range names {
		v := lookup(name)
		if v == "" {
			missing = append(missing, name)
		}
		vals[name] = v
	}
	if len(missing) > 0 {
		unavailable(t, service, "%s not set", strings.Join(missing, ", "))
	}
	return vals
}

// unavailable stops a test whose service is not there: t.Fatalf under CI
// (where scripts/test has started every service), t.Skipf elsewhere.
func unavailable(t testing.TB, service, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf("%s: %s (run scripts/services start %s)", service, fmt.Sprintf(format, args...), service)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s", msg)
		return
	}
	t.Skipf("%s", msg)
}

// reachable stops the test through unavailable unless every addr accepts a
// TCP connection (a .services/env can outlive the servers it names).
func reachable(t testing.TB, service string, addrs ...string) {
	t.Helper()
	for _, addr := range addrs {
		conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			unavailable(t, service, "%s does not answer: %v", addr, err)
			return
		}
		conn.Close()
	}
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseEnv reads lines of the form [export ]NAME=VALUE, as scripts/services
// writes them and a shell would read them: VALUE may mix plain text,
// backslash escapes, 'single-quoted' and "double-quoted" parts, and ends at
// unquoted white space, after which only a # comment may follow. Blank lines
// and # comment lines are skipped. A later line for a name wins.
func parseEnv(r io.Reader) (map[string]string, error) {
	vars := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			line = strings.TrimLeft(rest, " \t")
		}
		name, raw, ok := strings.Cut(line, "=")
		if !ok || !validName(name) {
			return nil, fmt.Errorf("line %d: want NAME=VALUE, have %q", n, sc.Text())
		}
		value, err := shellWord(raw)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		vars[name] = value
	}
	return vars, sc.Err()
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case i > 0 && '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return true
}

// shellWord unquotes one shell word at the start of s; what follows it may
// only be white space and a # comment.
func shellWord(s string) (string, error) {
	var b strings.Builder
	i := 0
	for i < len(s) {
		switch c := s[i]; c {
		case ' ', '\t':
			if rest := strings.TrimLeft(s[i:], " \t"); rest != "" && rest[0] != '#' {
				return "", fmt.Errorf("unexpected %q after the value", rest)
			}
			return b.String(), nil
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", errors.New("unterminated single quote")
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case '"':
			i++
			for {
				if i >= len(s) {
					return "", errors.New("unterminated double quote")
				}
				if s[i] == '"' {
					i++
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
				i++
			}
		case '\\':
			if i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}
