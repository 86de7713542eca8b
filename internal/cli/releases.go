package cli

import (
	"fmt"
	"strings"
)

// Release is one release of an original that a tool emulates, and how it
// differs: T is the tool's own struct of differences (texts, defaults,
// which warnings print), filled in once in the tool's releases.go, so that
// no version check is scattered through the code.
type Release[T any] struct {
	// Name is what PERFCLONES_<TOOL>_VERSION takes: "3.9", "2.18".
	Name string
	// Version is the full release the texts follow ("3.9.2"), which a
	// tool's --version prints where the original has one.
	Version string
	// Also lists other names that select this release: the releases
	// whose output it stands for ("2.2" ... "3.8" for Kafka 3.9).
	Also []string
	Diff T
}

// Releases is a tool's table: the variable that selects one, the default
// (the release family the vendors' documents use) and every release.
type Releases[T any] struct {
	Env     string // PERFCLONES_KAFKA_VERSION
	Default string // a Name in List
	List    []Release[T]
}

// Select returns the release the environment asks for, or the default.
// An unknown value is an *Exit: one line on stderr and code 2, which the
// tool returns before it does anything else.
func (r *Releases[T]) Select(getenv func(string) string) (*Release[T], error) {
	want := strings.TrimSpace(getenv(r.Env))
	if want == "" {
		want = r.Default
	}
	for i := range r.List {
		rel := &r.List[i]
		if want == rel.Name || want == rel.Version {
			return rel, nil
		}
		for _, a := range rel.Also {
			if want == a {
				return rel, nil
			}
		}
	}
	names := make([]string, len(r.List))
	for i, rel := range r.List {
		names[i] = rel.Name
	}
	return nil, &Exit{Code: 2, Stderr: fmt.Sprintf("perfclones: %s=%s is not a release this tool emulates (known: %s)\n",
		r.Env, want, strings.Join(names, ", "))}
}

// Must returns the named release; it panics on a name missing from the
// table, which is a programming error caught by any test.
func (r *Releases[T]) Must(name string) *Release[T] {
	rel, err := r.Select(func(string) string { return name })
	if err != nil {
		panic(err)
	}
	return rel
}
