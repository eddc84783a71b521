// Package cost measures what a test or benchmark spends in this process:
// CPU time and heap allocation. Benchmarks report these as metrics (CPU time
// per row or per value, allocation per byte of input) and fuzz tests hold
// allocation to a bound of the input's size; speed is never asserted as a
// wall-clock limit. Only tests import this package.
package cost

import (
	"runtime"
	"syscall"
	"time"
)

// CPUTime is the process's user and system CPU time so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// AllocatedBy gives the bytes the Go heap allocated while f ran.
func AllocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
