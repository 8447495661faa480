package gpu

import "time"

// MaddProbe is one run of the arithmetic throughput probe (ProbeMadd,
// csrc/probe.h): Threads threads, each Iters mixed additions of
// L1-resident points into its accumulator.
type MaddProbe struct {
	RegBlocks   int // blocks a multiprocessor the kernel's registers are sized for
	BlocksPerSM int // blocks a multiprocessor launched
	Threads     int
	Iters       int
	Time        time.Duration // the kernel's device time (CUDA events)
	Regs        int           // registers a thread
	SpillBytes  int           // local memory a thread (spills)
}

// Adds is the number of mixed additions the run did.
func (p MaddProbe) Adds() int64 { return int64(p.Threads) * int64(p.Iters) }

// FmulProbe is one run of the product throughput probe (ProbeFmul): Threads
// threads, each with ILP independent chains of Iters Fq products.
type FmulProbe struct {
	ILP         int
	BlocksPerSM int
	Threads     int
	Iters       int
	Time        time.Duration // the kernel's device time (CUDA events)
}

// Products is the number of Fq products the run did.
func (p FmulProbe) Products() int64 { return int64(p.Threads) * int64(p.ILP) * int64(p.Iters) }
