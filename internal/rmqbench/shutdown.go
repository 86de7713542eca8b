package rmqbench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/perfclones/perfclones/internal/cli"
)

// shutdown is benchmark/shutdown.sh: SIGTERM the running benchmark of the
// named kind. The original finds the JVM by its class name in ps; ours
// finds processes whose command line runs rocketmq-benchmark in that mode.
func shutdown(args []string, sys cli.IO) error {
	kinds := map[string]struct{ mode, words string }{
		"producer":  {"producer", "producer"},
		"consumer":  {"consumer", "consumer"},
		"tproducer": {"tproducer", "transaction producer"},
		"bproducer": {"batchproducer", "batch producer"},
	}
	var k struct{ mode, words string }
	ok := len(args) > 0
	if ok {
		k, ok = kinds[args[0]]
	}
	if !ok {
		return &cli.Exit{Code: 0, Stdout: "Usage: shutdown producer | consumer | tproducer | bproducer\n"}
	}
	pids := benchmarkPids(k.mode)
	if len(pids) == 0 {
		// exit -1 in sh is status 255.
		return &cli.Exit{Code: 255, Stdout: "No benchmark " + k.words + " running.\n"}
	}
	list := strings.Join(pids, "\n")
	var b strings.Builder
	b.WriteString("The benchmark " + k.words + "(" + list + ") is running...\n")
	for _, p := range pids {
		if n, err := strconv.Atoi(p); err == nil {
			_ = syscall.Kill(n, syscall.SIGTERM)
		}
	}
	b.WriteString("Send shutdown request to benchmark " + k.words + "(" + list + ") OK\n")
	return &cli.Exit{Code: 0, Stdout: b.String()}
}

// benchmarkPids lists the processes (not this one) whose arguments hold
// rocketmq-benchmark followed by mode.
func benchmarkPids(mode string) []string {
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		for i := 0; i+1 < len(argv); i++ {
			if filepath.Base(argv[i]) == ToolName && argv[i+1] == mode {
				out = append(out, e.Name())
				break
			}
		}
	}
	return out
}
