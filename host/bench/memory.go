package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/zkhost/zkhost/sdk/procfs"
)

// ProcMemory is the resident memory of one or more processes, from
// /proc/PID/status: RSS and its three parts (anonymous memory: heaps,
// stacks, pinned staging; file pages mapped: executables, key files; shared
// memory: the memfds partitions travel in, counted in every process that maps
// them).
type ProcMemory struct {
	RSS, Anon, File, Shmem uint64
}

func (m *ProcMemory) add(o ProcMemory) {
	m.RSS += o.RSS
	m.Anon += o.Anon
	m.File += o.File
	m.Shmem += o.Shmem
}

func (m *ProcMemory) peak(o ProcMemory) {
	m.RSS = max(m.RSS, o.RSS)
	m.Anon = max(m.Anon, o.Anon)
	m.File = max(m.File, o.File)
	m.Shmem = max(m.Shmem, o.Shmem)
}

// MemoryPeaks is what a run's memory sampler saw at its highest, each figure
// on its own (their peaks need not coincide).
type MemoryPeaks struct {
	Samples  int
	Interval time.Duration
	// Host is this process: with a standalone daemon, the daemon (queue,
	// budget, synthesis, finalization) and the benchmark's client.
	Host ProcMemory
	// Children is the processes this one started (backends, synthesizer
	// plugins), summed at each sample.
	Children ProcMemory
	// MachineUsed is MemTotal minus MemAvailable (/proc/meminfo): what the
	// whole machine could not give back, pinned and registered memory
	// included; MachineUsedAtStart is its level before the first job.
	MachineUsed, MachineUsedAtStart uint64
	// BudgetUsed is the daemon's memory budget granted (its own accounting);
	// Synthesizing and OnDevices the partitions being solved and proved.
	BudgetUsed   uint64
	Synthesizing int
	OnDevices    int
	// Note says what could not be sampled (no /proc: not Linux).
	Note string
}

// memorySampler samples a run's memory every interval until stopped.
type memorySampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	p    MemoryPeaks
}

// startMemorySampler samples this process, its children and the machine from
// /proc when procs is set, and the daemon's status (budget, partitions at
// work) from t, every interval.
func startMemorySampler(ctx context.Context, t Target, procs bool, interval time.Duration) *memorySampler {
	s := &memorySampler{stop: make(chan struct{}), done: make(chan struct{})}
	s.p.Interval = interval
	if procs {
		if used, err := machineUsed("/proc/meminfo"); err == nil {
			s.p.MachineUsedAtStart = used
		} else {
			s.p.Note = err.Error()
			procs = false
		}
	}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		self := os.Getpid()
		for {
			s.sample(ctx, t, procs, self)
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *memorySampler) sample(ctx context.Context, t Target, procs bool, self int) {
	var host, children ProcMemory
	var used uint64
	if procs {
		host, _ = procMemory(fmt.Sprintf("/proc/%d/status", self))
		for _, pid := range procfs.Children("/proc", self) {
			m, err := procMemory(fmt.Sprintf("/proc/%d/status", pid))
			if err == nil {
				children.add(m)
			}
		}
		used, _ = machineUsed("/proc/meminfo")
	}
	st, err := t.Status(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Samples++
	s.p.Host.peak(host)
	s.p.Children.peak(children)
	s.p.MachineUsed = max(s.p.MachineUsed, used)
	if err == nil {
		s.p.BudgetUsed = max(s.p.BudgetUsed, st.Budget.UsedBytes)
		s.p.Synthesizing = max(s.p.Synthesizing, st.SynthesisRunning)
		n := 0
		for _, d := range st.Devices {
			n += d.InFlight
		}
		s.p.OnDevices = max(s.p.OnDevices, n)
	}
}

// finish stops the sampler and returns its peaks.
func (s *memorySampler) finish() MemoryPeaks {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p
}

// procMemory reads one process's resident memory from its /proc status file.
func procMemory(path string) (ProcMemory, error) {
	f, err := procfs.FileFields(path, "VmRSS", "RssAnon", "RssFile", "RssShmem")
	if err != nil {
		return ProcMemory{}, err
	}
	if _, ok := f["VmRSS"]; !ok {
		return ProcMemory{}, fmt.Errorf("%s: no VmRSS (a kernel thread, or a process that exited)", path)
	}
	return ProcMemory{RSS: f["VmRSS"], Anon: f["RssAnon"], File: f["RssFile"], Shmem: f["RssShmem"]}, nil
}

// machineUsed is MemTotal minus MemAvailable.
func machineUsed(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	m, err := procfs.ParseMeminfo(f)
	if err != nil {
		return 0, err
	}
	return m.Total - min(m.Total, m.Available), nil
}
