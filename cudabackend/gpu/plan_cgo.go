//go:build cgo

package gpu

// The C plan of csrc/msm_plan.h, the one msm.cu sizes its allocations from
// (and groth16.h's sizes of compact partitions and constraint systems),
// reached through cgo so that tests compare memplan.go's arithmetic with it on
// any machine (the header needs no CUDA).

/*
#cgo CFLAGS: -I${SRCDIR}/../csrc
#include "msm_plan.h"
#include "groth16.h"
*/
import "C"

// cMSMWork is zk_msm_work_of(zk_msm_make_plan_pre(n, ...)) with the header's
// sort bound and ones nones (zk_msm_ones_threads), as msm.cu computes it, in
// memplan.go's types.
func cMSMWork(group int, n uint64, preC, preDepth int, onDevice bool, nones uint64, pippenger bool, residentAccum, residentReduce uint32) (msmPlan, msmWork) {
	p := C.zk_msm_make_plan_pre(C.size_t(n), C.int(preC), C.int(preDepth), C.uint32_t(residentAccum), C.uint32_t(residentReduce))
	od := C.int(0)
	if onDevice {
		od = 1
	}
	sb := C.zk_msm_sort_bytes_bound(p.M, p.keybits)
	pip := C.int(0)
	if pippenger {
		pip = 1
	}
	ot := C.zk_msm_ones_threads(C.size_t(nones), C.uint32_t(residentAccum))
	w := C.zk_msm_work_of(C.int(group), &p, C.size_t(n), od, sb, ot, pip)
	return msmPlan{
			c: int(p.c), nwin: int(p.nwin), depth: int(p.depth), g: int(p.G), m: uint32(p.m), sentinel: uint32(p.sentinel), keybits: int(p.keybits),
			chunk: uint64(p.chunk), pairs: uint64(p.M), t0: uint32(p.T0), t1max: uint32(p.T1max),
			tred: uint32(p.Tred), l: uint32(p.L), logL: uint32(p.logL),
		}, msmWork{
			scalars: uint64(w.scalars), keys: uint64(w.keys), vals: uint64(w.vals), sortTmp: uint64(w.sort_tmp),
			buckets: uint64(w.buckets), partA: uint64(w.part_a), partKA: uint64(w.part_ka), partB: uint64(w.part_b),
			partKB: uint64(w.part_kb), red: uint64(w.red), tree: uint64(w.tree), wacc: uint64(w.wacc), out: uint64(w.out),
			onesPart: uint64(w.ones_part), onesTree: uint64(w.ones_tree), sortSets: int(w.sort_sets), allocs: int(w.allocs), total: uint64(w.total),
		}
}

// cMSMPrecomputeChoice is zk_msm_precompute_choice(n, maxDepth).
func cMSMPrecomputeChoice(n uint64, maxDepth int) (c, d int) {
	var cc, cd C.int
	C.zk_msm_precompute_choice(C.size_t(n), C.int(maxDepth), &cc, &cd)
	return int(cc), int(cd)
}

// cMSMBasesBytes is zk_msm_bases_bytes(group, n, depth).
func cMSMBasesBytes(group int, n uint64, depth int) uint64 {
	return uint64(C.zk_msm_bases_bytes(C.int(group), C.size_t(n), C.int(depth)))
}

// cMSMPlainBelow is zk_msm_plain_below(n, c, depth).
func cMSMPlainBelow(n uint64, c, depth int) uint64 {
	return uint64(C.zk_msm_plain_below(C.size_t(n), C.int(c), C.int(depth)))
}

// cMSMClassifyWork is zk_msm_classify_work(n).
func cMSMClassifyWork(n uint64) uint64 { return uint64(C.zk_msm_classify_work(C.size_t(n))) }

// cCompactDeviceBytes is zk_g16_compact_device_bytes(nwires).
func cCompactDeviceBytes(nwires int) uint64 {
	return uint64(C.zk_g16_compact_device_bytes(C.size_t(nwires)))
}

// cCompactWords is zk_g16_compact_words(nwires).
func cCompactWords(nwires int) int { return int(C.zk_g16_compact_words(C.size_t(nwires))) }

// cConstraintsDeviceBytes is zk_g16_constraints_device_bytes(rows, coeffs, terms).
func cConstraintsDeviceBytes(rows, coeffs, terms uint64) uint64 {
	return uint64(C.zk_g16_constraints_device_bytes(C.uint64_t(rows), C.uint64_t(coeffs), C.uint64_t(terms)))
}
