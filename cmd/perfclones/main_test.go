package main

import (
	"slices"
	"testing"

	"github.com/perfclones/perfclones/internal/multicall"
)

// The tools' declared layout entries must make a tree that works: no path
// used twice, and every link named so that the binary starts its tool.
func TestLayoutOfEveryTool(t *testing.T) {
	plan, err := tools.Layout()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range plan {
		paths = append(paths, p.Path)
		if p.Kind == multicall.Link {
			if tool, ok := tools.Find(p.Path); !ok || tool.Name != p.Tool {
				t.Errorf("%s starts %q, want %s", p.Path, tool.Name, p.Tool)
			}
		}
	}
	for _, tool := range tools {
		if !slices.Contains(paths, "bin/"+tool.Name) {
			t.Errorf("no bin/%s in %q", tool.Name, paths)
		}
	}
}

// Every name a tool answers to belongs to one tool only, and none is a
// command of perfclones itself.
func TestNamesAreUnique(t *testing.T) {
	owner := map[string]string{}
	for _, name := range []string{"run", "install", "version", "help"} {
		owner[name] = "perfclones"
	}
	for _, tool := range tools {
		for _, name := range append([]string{tool.Name}, tool.Aliases...) {
			if prev, dup := owner[name]; dup {
				t.Errorf("%s is a name of %s and of %s", name, prev, tool.Name)
			}
			owner[name] = tool.Name
		}
	}
}
