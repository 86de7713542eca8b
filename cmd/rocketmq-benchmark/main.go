// Command rocketmq-benchmark is Apache RocketMQ's benchmark programs:
// rocketmq-benchmark producer|consumer|batchproducer ARGS... (see
// internal/rmqbench).
package main

import (
	"os"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/rmqbench"
)

func main() { cli.Process(rmqbench.Tool, os.Args[1:]) }
