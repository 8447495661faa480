package procfs

import (
	"fmt"
	"syscall"
	"time"
)

// CPUTime is the CPU time, user and system, this process has used so far:
// every thread, the garbage collector's included (getrusage(2), RUSAGE_SELF).
// The CPU backend reports its utilization from it.
func CPUTime() (time.Duration, error) { return rusageCPU(syscall.RUSAGE_SELF) }

// CPUTimeWithChildren is CPUTime plus the CPU time of this process's children
// that were waited for (RUSAGE_CHILDREN): what a benchmark that runs and reaps
// backend processes measures, as CPU time holds still on a loaded machine
// where wall time does not.
func CPUTimeWithChildren() (time.Duration, error) {
	self, err := rusageCPU(syscall.RUSAGE_SELF)
	if err != nil {
		return 0, err
	}
	children, err := rusageCPU(syscall.RUSAGE_CHILDREN)
	return self + children, err
}

func rusageCPU(who int) (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
