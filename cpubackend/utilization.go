package cpubackend

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/procfs"
)

// cpuClock is the process's CPU time and the wall time at the last utilization
// sample, so the next sample covers what happened since.
type cpuClock struct {
	wall time.Time
	cpu  time.Duration
}

// processCPU is the CPU time (user and system) the process has used so far.
func processCPU() (time.Duration, error) { return procfs.CPUTime() }

// workerCPU tracks the CPU time of proof workers (worker.go): those running,
// read from /proc as they go, and the total of those that ended, from their
// own rusage, so a proof's CPU time counts while it computes rather than all
// at once when its worker is reaped.
type workerCPU struct {
	live  map[int]bool
	ended time.Duration
}

func (b *Backend) workerStarted(pid int) {
	b.clockMu.Lock()
	defer b.clockMu.Unlock()
	if b.workers.live == nil {
		b.workers.live = map[int]bool{}
	}
	b.workers.live[pid] = true
}

func (b *Backend) workerEnded(pid int, st *os.ProcessState) {
	b.clockMu.Lock()
	defer b.clockMu.Unlock()
	delete(b.workers.live, pid)
	if st != nil {
		b.workers.ended += st.UserTime() + st.SystemTime()
	}
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times: 100
// on every Linux architecture Go supports.
const clockTicks = 100

// liveCPU reads a running process's CPU time from /proc/PID/stat (0 when it is
// gone: it then counts in ended once reaped).
func liveCPU(pid int) time.Duration {
	f := procStatFields(pid)
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14 of the whole line
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// totalCPU is the backend's CPU time with its workers'; clockMu held.
func (b *Backend) totalCPULocked() (time.Duration, error) {
	cpu, err := processCPU()
	if err != nil {
		return 0, err
	}
	cpu += b.workers.ended
	for pid := range b.workers.live {
		cpu += liveCPU(pid)
	}
	return cpu, nil
}

// Utilization answers one sample covering the time since the previous call (or
// since New): the CPU time of the process and its proof workers over that
// period divided by the threads it proves with, capped at 100%. The CPU backend has no driver that samples
// on its own, so it measures on demand and since is not needed: the host asks
// about ten times a second, and each answer starts where the last ended. Its
// figure counts everything the process does (proofs, the digest pass, the
// garbage collector, gRPC), as top does; it reads 0% between proofs.
func (b *Backend) Utilization(ctx context.Context, since time.Time) (sdk.Utilization, error) {
	b.clockMu.Lock()
	cpu, err := b.totalCPULocked()
	now := time.Now()
	last := b.clock
	if err == nil {
		b.clock = cpuClock{wall: now, cpu: cpu}
	}
	b.clockMu.Unlock()
	if err != nil {
		return sdk.Utilization{}, sdk.Errorf(sdk.ErrUnavailable, "utilization: %v", err)
	}
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

// procStatFields returns the fields of /proc/PID/stat after the command name
// (f[0] is the state, field 3 of the whole line), nil when the process is gone.
// The command name may hold spaces; the fields after its ')' are fixed.
func procStatFields(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}
