//go:build cuda

package gpu

/*
#include "probe.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// ProbeMadd runs the arithmetic throughput probe on device dev (see
// csrc/probe.h): registers sized for regBlocks blocks a multiprocessor (2
// or 3), blocksPerSM blocks launched a multiprocessor, iters additions a
// thread over points (a power of two from 2 to 1024, finite and distinct).
// It returns the run and the accumulators in affine form: thread t's
// starts at points[s], s = t mod len(points), plus points[(s+1+i) mod
// len(points)] for i < iters.
func ProbeMadd(dev, regBlocks, blocksPerSM, iters int, points []bls12381.G1Affine) (MaddProbe, []bls12381.G1Affine, error) {
	const op = "gpu: probe madd"
	if iters < 0 || iters > 1<<30 {
		return MaddProbe{}, nil, fmt.Errorf("%s: iters %d outside [0, 2^30]: %w", op, iters, ErrInvalid)
	}
	if len(points) == 0 {
		return MaddProbe{}, nil, fmt.Errorf("%s: no points: %w", op, ErrInvalid)
	}
	var e errBuf
	var threads C.uint32_t
	if err := check(op, C.zk_probe_threads(C.int(dev), C.int(blocksPerSM), &threads, e.ptr(), e.size()), &e); err != nil {
		return MaddProbe{}, nil, err
	}
	out := make([]bls12381.G1Affine, int(threads))
	var ms C.float
	var regs, spill C.int
	rc := C.zk_probe_madd(C.int(dev), C.int(regBlocks), C.int(blocksPerSM),
		unsafe.Pointer(&points[0]), C.uint32_t(len(points)), C.uint32_t(iters),
		unsafe.Pointer(&out[0]), &ms, &regs, &spill, e.ptr(), e.size())
	if err := check(op, rc, &e); err != nil {
		return MaddProbe{}, nil, err
	}
	return MaddProbe{
		RegBlocks: regBlocks, BlocksPerSM: blocksPerSM, Threads: int(threads), Iters: iters,
		Time: msDuration(ms), Regs: int(regs), SpillBytes: int(spill),
	}, out, nil
}

// ProbeFmul runs the product throughput probe on device dev (see
// csrc/probe.h): ilp chains a thread (1, 2 or 4), blocksPerSM blocks a
// multiprocessor, iters products a chain. Chain j of thread t starts at
// xs[k] and multiplies by ys[k] (k = (t*ilp + j) mod len(xs); xs and ys
// the same length, a power of two up to 1024); it returns the run and
// every chain's result, xs[k] * ys[k]^iters, at t*ilp + j.
func ProbeFmul(dev, ilp, blocksPerSM, iters int, xs, ys []fp.Element) (FmulProbe, []fp.Element, error) {
	const op = "gpu: probe fmul"
	if iters < 0 || iters > 1<<30 {
		return FmulProbe{}, nil, fmt.Errorf("%s: iters %d outside [0, 2^30]: %w", op, iters, ErrInvalid)
	}
	if len(xs) == 0 || len(xs) != len(ys) {
		return FmulProbe{}, nil, fmt.Errorf("%s: %d xs and %d ys: %w", op, len(xs), len(ys), ErrInvalid)
	}
	if ilp != 1 && ilp != 2 && ilp != 4 {
		return FmulProbe{}, nil, fmt.Errorf("%s: ilp %d: 1, 2 or 4: %w", op, ilp, ErrInvalid)
	}
	var e errBuf
	var threads C.uint32_t
	if err := check(op, C.zk_probe_threads(C.int(dev), C.int(blocksPerSM), &threads, e.ptr(), e.size()), &e); err != nil {
		return FmulProbe{}, nil, err
	}
	out := make([]fp.Element, int(threads)*ilp)
	var ms C.float
	rc := C.zk_probe_fmul(C.int(dev), C.int(ilp), C.int(blocksPerSM), unsafe.Pointer(&xs[0]),
		unsafe.Pointer(&ys[0]), C.uint32_t(len(xs)), C.uint32_t(iters), unsafe.Pointer(&out[0]),
		&ms, e.ptr(), e.size())
	if err := check(op, rc, &e); err != nil {
		return FmulProbe{}, nil, err
	}
	return FmulProbe{ILP: ilp, BlocksPerSM: blocksPerSM, Threads: int(threads), Iters: iters, Time: msDuration(ms)}, out, nil
}
