package cpubackend

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/zkhost/zkhost/sdk"
)

// cpuClock is the process's CPU time and the wall time at the last utilization
// sample, so the next sample covers what happened since.
type cpuClock struct {
	wall time.Time
	cpu  time.Duration
}

// processCPU is the CPU time (user and system) the process has used so far.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// Utilization answers one sample covering the time since the previous call (or
// since New): the process's CPU time over that period divided by the threads
// it proves with, capped at 100%. The CPU backend has no driver that samples
// on its own, so it measures on demand and since is not needed: the host asks
// about ten times a second, and each answer starts where the last ended. Its
// figure counts everything the process does (proofs, the digest pass, the
// garbage collector, gRPC), as top does; it reads 0% between proofs.
func (b *Backend) Utilization(ctx context.Context, since time.Time) (sdk.Utilization, error) {
	cpu, err := processCPU()
	if err != nil {
		return sdk.Utilization{}, sdk.Errorf(sdk.ErrUnavailable, "utilization: %v", err)
	}
	now := time.Now()
	b.clockMu.Lock()
	last := b.clock
	b.clock = cpuClock{wall: now, cpu: cpu}
	b.clockMu.Unlock()
	u := sdk.Utilization{Source: sdk.UtilizationProcessCPU}
	period := now.Sub(last.wall)
	if period <= 0 {
		return u, nil
	}
	pct := 100 * float64(cpu-last.cpu) / (float64(period) * float64(b.threads))
	u.Samples = []sdk.UtilizationSample{{Time: now, Period: period, Percent: min(100, max(0, pct))}}
	return u, nil
}

var _ sdk.UtilizationReporter = (*Backend)(nil)
