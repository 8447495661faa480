package csrc

/*
#include "msm.h"
#include "msm_plan.h"
#include "ntt.h"
#include "groth16.h"
*/
import "C"

// MaxDepth is the most precomputed copies of an MSM's bases
// (ZK_MSM_MAX_DEPTH).
const MaxDepth = C.ZK_MSM_MAX_DEPTH

// MaxChunk is the most scalars one chunk of an MSM holds (ZK_MSM_MAX_CHUNK):
// longer MSMs run in chunks that share one workspace.
const MaxChunk = C.ZK_MSM_MAX_CHUNK

// Groups of an MSM, as msm.h numbers them: BLS12-381's, then BN254's.
const (
	G1      = C.ZK_MSM_G1
	G2      = C.ZK_MSM_G2
	BN254G1 = C.ZK_MSM_BN254_G1
	BN254G2 = C.ZK_MSM_BN254_G2
)

// Curves, as ntt.h's zk_ntt_curve numbers them (groth16.h's keys take them),
// and the forms of H (zk_h_form).
const (
	CurveBLS12381 = C.ZK_NTT_BLS12_381
	CurveBN254    = C.ZK_NTT_BN254
	HGnark        = C.ZK_H_GNARK
	HSnarkjs      = C.ZK_H_SNARKJS
)

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// PrecomputeChoice is zk_msm_precompute_choice: the window c and the copies
// d (at most maxDepth) that precomputing the bases of an MSM over n points
// makes; d = 1 (c = 0) when copies do not pay.
func PrecomputeChoice(n uint64, maxDepth int) (c, d int) {
	var cc, cd C.int
	C.zk_msm_precompute_choice(C.size_t(n), C.int(maxDepth), &cc, &cd)
	return int(cc), int(cd)
}

// BasesBytes is zk_msm_bases_bytes: the device memory of n resident points
// of group with depth precomputed copies (1: none).
func BasesBytes(group int, n uint64, depth int) uint64 {
	return uint64(C.zk_msm_bases_bytes(C.int(group), C.size_t(n), C.int(depth)))
}

// WorkBound is zk_msm_work_bound: the device working memory of one MSM of n
// device scalars over bases with depth copies for window c (1: none), on a
// device keeping accum and reduce threads of the MSM's kernels, with the
// radix sort's bound.
func WorkBound(group int, n uint64, c, depth int, accum, reduce uint32) uint64 {
	return uint64(C.zk_msm_work_bound(C.int(group), C.size_t(n), C.int(c), C.int(depth), C.uint32_t(accum), C.uint32_t(reduce)))
}

// SplitWorkBound is zk_msm_split_work_bound: the most device memory a split
// MSM over a classification of n scalars allocates, whatever their counts.
func SplitWorkBound(group int, n uint64, c, depth int, accum, reduce uint32) uint64 {
	return uint64(C.zk_msm_split_work_bound(C.int(group), C.size_t(n), C.int(c), C.int(depth), C.uint32_t(accum), C.uint32_t(reduce)))
}

// StreamWorkBound is zk_msm_stream_work_bound: the device working memory of
// one streamed MSM (zk_msm_run_stream) of n points in chunks of chunk, its
// window at most maxC bits (0: no cap), with the radix sort's bound.
func StreamWorkBound(group int, n, chunk uint64, maxC int, accum, reduce uint32) uint64 {
	return uint64(C.zk_msm_stream_work_bound(C.int(group), C.size_t(n), C.size_t(chunk), C.int(maxC), C.uint32_t(accum), C.uint32_t(reduce)))
}

// MakePlanStream is zk_msm_make_plan_stream: a streamed MSM of n points in
// chunks of chunk, its window at most maxC bits (0: no cap).
func MakePlanStream(n, chunk uint64, maxC int, accum, reduce uint32) Plan {
	return goPlan(C.zk_msm_make_plan_stream(C.size_t(n), C.size_t(chunk), C.int(maxC), C.uint32_t(accum), C.uint32_t(reduce)))
}

// ClassifyWork is zk_msm_classify_work: the device memory classifying n
// scalars for a split MSM takes.
func ClassifyWork(n uint64) uint64 { return uint64(C.zk_msm_classify_work(C.size_t(n))) }

// Plan is zk_msm_plan in Go's types: window, bucket sets, chunk and thread
// counts of one MSM.
type Plan struct {
	C, NWin       int    // window bits, windows of digits
	Depth, G      int    // copies of the bases read, bucket sets reduced
	M, Sentinel   uint32 // buckets per set, sort key of a zero digit
	KeyBits       int    // bits the radix sort looks at
	Chunk, Pairs  uint64 // scalars per chunk, digit pairs of a full chunk
	T0, T1Max     uint32 // threads of the accumulation and of the first merge level
	TRed, L, LogL uint32 // reduction segments per window, their length and its log
	raw           C.zk_msm_plan
}

func goPlan(p C.zk_msm_plan) Plan {
	return Plan{
		C: int(p.c), NWin: int(p.nwin), Depth: int(p.depth), G: int(p.G), M: uint32(p.m), Sentinel: uint32(p.sentinel),
		KeyBits: int(p.keybits), Chunk: uint64(p.chunk), Pairs: uint64(p.M), T0: uint32(p.T0), T1Max: uint32(p.T1max),
		TRed: uint32(p.Tred), L: uint32(p.L), LogL: uint32(p.logL), raw: p,
	}
}

// MakePlan is zk_msm_make_plan: an MSM of n scalars over bases without
// copies, on a device keeping accum and reduce threads of its kernels.
func MakePlan(n uint64, accum, reduce uint32) Plan {
	return goPlan(C.zk_msm_make_plan(C.size_t(n), C.uint32_t(accum), C.uint32_t(reduce)))
}

// MakePlanPre is zk_msm_make_plan_pre: MakePlan over bases with depth copies
// for window c, read when they pay.
func MakePlanPre(n uint64, c, depth int, accum, reduce uint32) Plan {
	return goPlan(C.zk_msm_make_plan_pre(C.size_t(n), C.int(c), C.int(depth), C.uint32_t(accum), C.uint32_t(reduce)))
}

// PlainBelow is zk_msm_plain_below: the largest m <= n whose plan over depth
// copies for window c reads none (0: every plan reads them).
func PlainBelow(n uint64, c, depth int) uint64 {
	return uint64(C.zk_msm_plain_below(C.size_t(n), C.int(c), C.int(depth)))
}

// SortBytesBound is zk_msm_sort_bytes_bound: the radix sort's storage for
// pairs digit pairs of keyBits bits.
func SortBytesBound(pairs uint64, keyBits int) uint64 {
	return uint64(C.zk_msm_sort_bytes_bound(C.size_t(pairs), C.int(keyBits)))
}

// OnesThreads is zk_msm_ones_threads: the threads that sum the points of a
// split run's nones scalars equal to 1.
func OnesThreads(nones uint64, accum uint32) uint32 {
	return uint32(C.zk_msm_ones_threads(C.size_t(nones), C.uint32_t(accum)))
}

// Work is zk_msm_work in Go's types: one MSM's allocations.
type Work struct {
	Scalars, Keys, Vals, SortTmp, Buckets uint64
	PartA, PartKA, PartB, PartKB          uint64
	Red, Tree, WAcc, Out                  uint64
	OnesPart, OnesTree, Idx               uint64
	SortSets                              int
	Allocs                                int
	Total                                 uint64
}

// WorkOf is zk_msm_work_of: the allocations of plan p of group over n
// scalars (host scalars copied over unless onDevice), with sortBytes of sort
// storage; a dense run has onesThreads 0 and pippenger true, a split run the
// threads of its ones and pippenger false when none of its scalars needs
// Pippenger.
func WorkOf(group int, p Plan, n uint64, onDevice bool, sortBytes uint64, onesThreads uint32, pippenger bool) Work {
	w := C.zk_msm_work_of(C.int(group), &p.raw, C.size_t(n), cbool(onDevice), C.uint64_t(sortBytes), C.uint32_t(onesThreads), cbool(pippenger))
	return Work{
		Scalars: uint64(w.scalars), Keys: uint64(w.keys), Vals: uint64(w.vals), SortTmp: uint64(w.sort_tmp),
		Buckets: uint64(w.buckets), PartA: uint64(w.part_a), PartKA: uint64(w.part_ka), PartB: uint64(w.part_b),
		PartKB: uint64(w.part_kb), Red: uint64(w.red), Tree: uint64(w.tree), WAcc: uint64(w.wacc), Out: uint64(w.out),
		OnesPart: uint64(w.ones_part), OnesTree: uint64(w.ones_tree), Idx: uint64(w.idx), SortSets: int(w.sort_sets), Allocs: int(w.allocs), Total: uint64(w.total),
	}
}

// CompactWords is zk_g16_compact_words: the uint64 words of each bitmap of a
// compact W of nwires wires.
func CompactWords(nwires int) int { return int(C.zk_g16_compact_words(C.size_t(nwires))) }

// CompactDeviceBytes is zk_g16_compact_device_bytes: the device memory a
// slot holds for a compact W of nwires wires besides W, A, B and C.
func CompactDeviceBytes(nwires int) uint64 {
	return uint64(C.zk_g16_compact_device_bytes(C.size_t(nwires)))
}

// ConstraintsDeviceBytes is zk_g16_constraints_device_bytes: the device
// memory of a constraint system of rows rows, coeffs coefficients and terms
// terms in its three matrices.
func ConstraintsDeviceBytes(rows, coeffs, terms uint64) uint64 {
	return uint64(C.zk_g16_constraints_device_bytes(C.uint64_t(rows), C.uint64_t(coeffs), C.uint64_t(terms)))
}

// SlotDeviceBytes is zk_g16_slot_device_bytes: the device memory of a slot of
// a key with nwires wires and a domain of 2^logN.
func SlotDeviceBytes(nwires uint64, logN uint32) uint64 {
	return uint64(C.zk_g16_slot_device_bytes(C.size_t(nwires), C.uint32_t(logN)))
}

// SlotHostBytes is zk_g16_slot_host_bytes: the pinned staging of such a slot.
func SlotHostBytes(nwires uint64, logN uint32) uint64 {
	return uint64(C.zk_g16_slot_host_bytes(C.size_t(nwires), C.uint32_t(logN)))
}

// ResidentKeyDeviceBytes is zk_g16_resident_key_device_bytes: the device
// memory of a resident key's five point sets on curve without copies.
func ResidentKeyDeviceBytes(curve int, nwires, nk, nz uint64) uint64 {
	return uint64(C.zk_g16_resident_key_device_bytes(C.int(curve), C.uint64_t(nwires), C.uint64_t(nk), C.uint64_t(nz)))
}

// SetB2 is the G2 set's index among a key's five (ZK_G16_SET_B2): ProofRuns's
// last run.
const SetB2 = int(C.ZK_G16_SET_B2)

// How one of a proof's MSMs runs (zk_g16_run's kind).
const (
	RunNone   = int(C.ZK_G16_RUN_NONE)
	RunDense  = int(C.ZK_G16_RUN_DENSE)
	RunSplit  = int(C.ZK_G16_RUN_SPLIT)
	RunStream = int(C.ZK_G16_RUN_STREAM)
)

// Run is zk_g16_run: how one of a proof's MSMs runs, over how many scalars.
type Run struct {
	Kind int
	N    uint64
}

// ProofRuns is zk_g16_proof_runs: how each of a proof's five MSMs runs (G1
// A, B, K, Z, then G2 B) for a key of the given counts, chunk (0: resident)
// and lean, and the values W's classification covers (0: none).
func ProofRuns(nwires, na, nb, nk, nz, chunk uint64, lean bool) (runs [5]Run, classify uint64) {
	var c [5]C.zk_g16_run
	classify = uint64(C.zk_g16_proof_runs(C.uint64_t(nwires), C.uint64_t(na), C.uint64_t(nb), C.uint64_t(nk), C.uint64_t(nz), C.uint64_t(chunk), cbool(lean), &c[0]))
	for i := range c {
		runs[i] = Run{Kind: int(c[i].kind), N: uint64(c[i].n)}
	}
	return runs, classify
}

// StreamKeyDeviceBytes is zk_g16_stream_key_device_bytes: the device memory
// of a key on curve streamed in chunks of chunk points with na A and nb B
// points, whose proofs stream too when lean (its wire index then stays on
// the host).
func StreamKeyDeviceBytes(curve int, chunk, na, nb uint64, lean bool) uint64 {
	return uint64(C.zk_g16_stream_key_device_bytes(C.int(curve), C.uint64_t(chunk), C.uint64_t(na), C.uint64_t(nb), cbool(lean)))
}

// LeanSlotDeviceBytes is zk_g16_lean_slot_device_bytes: the device memory of a
// slot whose proofs stream, H in blocks of block elements.
func LeanSlotDeviceBytes(block uint64) uint64 {
	return uint64(C.zk_g16_lean_slot_device_bytes(C.uint64_t(block)))
}

// HStreamTablesBytes is zk_h_stream_tables_bytes: the device memory of the
// tables H out of core reads for a domain of 2^logN, once per device.
func HStreamTablesBytes(logN uint32) uint64 {
	return uint64(C.zk_h_stream_tables_bytes(C.uint32_t(logN)))
}

// LeanSlotHostBytes is zk_g16_lean_slot_host_bytes: the pinned staging of
// such a slot.
func LeanSlotHostBytes(nwires uint64, logN uint32, na, nb uint64) uint64 {
	return uint64(C.zk_g16_lean_slot_host_bytes(C.size_t(nwires), C.uint32_t(logN), C.uint64_t(na), C.uint64_t(nb)))
}

// HStreamMinBlock is zk_h_stream_min_block: the smallest block of H out of
// core for a domain of 2^logN (one whole row or column).
func HStreamMinBlock(logN uint32) uint64 {
	return uint64(C.zk_h_stream_min_block(C.uint32_t(logN)))
}

// DomainBytes is zk_ntt_domain_bytes_of: the device memory of the NTT's
// cached tables for a domain of 2^logN.
func DomainBytes(logN uint32) uint64 { return uint64(C.zk_ntt_domain_bytes_of(C.uint32_t(logN))) }
