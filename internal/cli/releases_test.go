package cli

import (
	"errors"
	"strings"
	"testing"
)

type diff struct{ prog string }

func table() *Releases[diff] {
	return &Releases[diff]{Env: "PERFCLONES_X_VERSION", Default: "3.9", List: []Release[diff]{
		{Name: "2.7", Version: "2.7.2", Diff: diff{prog: "old"}},
		{Name: "3.9", Version: "3.9.2", Also: []string{"3.8", "3.0"}, Diff: diff{prog: "producer-performance"}},
		{Name: "4.4", Version: "4.4.0", Diff: diff{prog: "kafka-producer-perf-test"}},
	}}
}

func TestReleasesSelect(t *testing.T) {
	for _, tt := range []struct{ env, want string }{
		{"", "3.9"}, {"3.9", "3.9"}, {"3.9.2", "3.9"}, {"3.8", "3.9"}, {" 4.4 ", "4.4"}, {"4.4.0", "4.4"}, {"2.7", "2.7"},
	} {
		rel, err := table().Select(Env(map[string]string{"PERFCLONES_X_VERSION": tt.env}))
		if err != nil || rel.Name != tt.want {
			t.Errorf("%q: got %v %v, want %s", tt.env, rel, err, tt.want)
		}
	}
}

func TestReleasesSelectUnknownIsExit2(t *testing.T) {
	for _, env := range []string{"9.9", "4", "latest", "3.9.2.1", "\xff"} {
		_, err := table().Select(Env(map[string]string{"PERFCLONES_X_VERSION": env}))
		var exit *Exit
		if !errors.As(err, &exit) || exit.Code != 2 || exit.Stdout != "" ||
			strings.Count(exit.Stderr, "\n") != 1 || !strings.Contains(exit.Stderr, "PERFCLONES_X_VERSION") ||
			!strings.Contains(exit.Stderr, "2.7, 3.9, 4.4") {
			t.Errorf("%q: %#v", env, err)
		}
	}
}

func FuzzReleasesSelect(f *testing.F) {
	for _, s := range []string{"", "3.9", "4.4.0", "x", "\n", "3.9\n4.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, env string) {
		rel, err := table().Select(Env(map[string]string{"PERFCLONES_X_VERSION": env}))
		if err == nil {
			if rel == nil {
				t.Fatal("no release and no error")
			}
			again, err := table().Select(Env(map[string]string{"PERFCLONES_X_VERSION": rel.Name}))
			if err != nil || again.Name != rel.Name {
				t.Fatalf("%q selects %s, whose name does not select it again", env, rel.Name)
			}
			return
		}
		var exit *Exit
		if !errors.As(err, &exit) || exit.Code != 2 || strings.Count(exit.Stderr, "\n") < 1 {
			t.Fatalf("%q: %#v", env, err)
		}
	})
}

func TestFinish(t *testing.T) {
	var out, errOut strings.Builder
	sys := IO{Stdout: &out, Stderr: &errOut, Getenv: Env(nil)}
	if code := Finish(sys, nil); code != 0 || out.Len()+errOut.Len() != 0 {
		t.Fatalf("nil: %d %q %q", code, out.String(), errOut.String())
	}
	wrapped := errors.Join(errors.New("context"), &Exit{Code: 3, Stdout: "usage\n", Stderr: "bad\n"})
	if code := Finish(sys, wrapped); code != 3 || out.String() != "usage\n" || errOut.String() != "bad\n" {
		t.Fatalf("exit: %d %q %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Finish(sys, errors.New("boom")); code != 1 || out.Len() != 0 || errOut.String() != "boom\n" {
		t.Fatalf("plain error: %d %q %q", code, out.String(), errOut.String())
	}
}
