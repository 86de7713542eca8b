// Package javaprops reads Java .properties files (java.util.Properties.load
// syntax): the client configuration files that the Kafka and RocketMQ tools
// take with --producer.config, --consumer.config and similar options.
package javaprops

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// Properties is an ordered set of key/value pairs; later keys replace earlier ones.
type Properties struct {
	keys   []string
	values map[string]string
}

// New returns an empty set.
func New() *Properties { return &Properties{values: map[string]string{}} }

// Set adds or replaces key.
func (p *Properties) Set(key, value string) {
	if _, ok := p.values[key]; !ok {
		p.keys = append(p.keys, key)
	}
	p.values[key] = value
}

// Get returns the value of key and whether it is set.
func (p *Properties) Get(key string) (string, bool) {
	v, ok := p.values[key]
	return v, ok
}

// Keys lists the keys in the order they were first set.
func (p *Properties) Keys() []string { return append([]string(nil), p.keys...) }

// Merge copies every key of other into p, replacing existing values.
func (p *Properties) Merge(other *Properties) {
	for _, k := range other.keys {
		p.Set(k, other.values[k])
	}
}

// LoadFile reads a properties file.
func LoadFile(path string) (*Properties, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Load(f)
}

// Load parses properties syntax: '#' and '!' comments, '=', ':' or white
// space between key and value, backslash line continuations, and the
// escapes \t \n \r \f \uXXXX (any other escaped character stands for itself).
func Load(r io.Reader) (*Properties, error) {
	p := New()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var logical strings.Builder
	continuing := false
	for sc.Scan() {
		line := sc.Text()
		if continuing {
			line = strings.TrimLeft(line, " \t\f")
		} else {
			trimmed := strings.TrimLeft(line, " \t\f")
			if trimmed == "" || trimmed[0] == '#' || trimmed[0] == '!' {
				continue
			}
			line = trimmed
		}
		// An odd number of trailing backslashes continues the line.
		n := 0
		for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
			n++
		}
		if n%2 == 1 {
			logical.WriteString(line[:len(line)-1])
			continuing = true
			continue
		}
		logical.WriteString(line)
		continuing = false
		k, v := splitEntry(logical.String())
		p.Set(unescape(k), unescape(v))
		logical.Reset()
	}
	if continuing {
		k, v := splitEntry(logical.String())
		p.Set(unescape(k), unescape(v))
	}
	return p, sc.Err()
}

// splitEntry separates the raw key from the raw value.
func splitEntry(s string) (string, string) {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
	}
	key := s[:min(i, len(s))]
	rest := s[min(i, len(s)):]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(v))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
