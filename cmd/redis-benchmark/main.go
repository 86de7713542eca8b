// Command redis-benchmark is a drop-in clone of Redis's redis-benchmark.
package main

import (
	"os"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/redisbench"
)

func main() { cli.Process(redisbench.Tool, os.Args[1:]) }
