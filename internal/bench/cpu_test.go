package bench_test

import (
	"testing"
	"time"
)

// reportCPU adds a cpu-ns/op metric: CPU time since start per iteration.
func reportCPU(b *testing.B, start time.Duration) {
	if c := cpuTime(); c > 0 {
		b.ReportMetric(float64(c-start)/float64(b.N), "cpu-ns/op")
	}
}
