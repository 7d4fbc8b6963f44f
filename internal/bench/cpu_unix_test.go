//go:build unix

package bench_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) this process has used so far. On
// a busy two-core machine wall time per op swings by ±20%; CPU time, which
// counts the fake server's work and ours alike, is steadier.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
