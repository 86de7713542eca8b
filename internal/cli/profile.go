//go:build cpuprofile

package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// A developer build (go build -tags cpuprofile) writes a CPU profile of
// the whole process to the file PERFCLONES_CPUPROFILE names, for go tool
// pprof; scripts/profile-kafka-producer uses it.
func init() {
	startProfile = func() func() {
		path := os.Getenv("PERFCLONES_CPUPROFILE")
		if path == "" {
			return func() {}
		}
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "perfclones: PERFCLONES_CPUPROFILE: %v\n", err)
			return func() {}
		}
		return func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}
	}
}
