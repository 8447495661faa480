package gpu

import (
	"fmt"
	"math/bits"
	"os"
	"strconv"

	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// This file is the device-memory accounting of a Groth16 key and its proofs:
// what LoadGroth16Key, NewSlot and Prove allocate, for admission. The MSM
// working memory follows csrc/msm_plan.h, the header msm.cu sizes its
// allocations from, line for line; TestMSMWorkMatchesPlanHeader compares the
// two through cgo on any machine, and the GPU tests compare the estimate with
// cudaMemGetInfo.

// maxThreadsPerSM bounds the threads an SM keeps resident (2048 on every
// architecture from sm_80 to sm_90): the MSM's partial-sum and reduction
// buffers grow with the resident threads, so the bound gives an upper bound.
const maxThreadsPerSM = 2048

// DefaultSMCount is the SM count estimates assume when the device's is not
// known (an H200 has 132).
const DefaultSMCount = 132

// Residency is how many threads of the MSM's accumulation (k_accum0) and
// reduction (k_reduce) kernels a device keeps at once, for G1 (index 0) and
// G2 (index 1): the MSM's thread counts, and so its partial-sum buffers,
// follow them. DeviceResidency asks the device; BoundResidency bounds it.
type Residency struct {
	Accum, Reduce [2]uint32
}

// BoundResidency is an upper bound of any device's Residency with sms
// multiprocessors (0: DefaultSMCount): every SM full. Estimates made with it
// are upper bounds: every size grows with the residency.
func BoundResidency(sms int) Residency {
	if sms <= 0 {
		sms = DefaultSMCount
	}
	t := uint32(sms * maxThreadsPerSM)
	return Residency{Accum: [2]uint32{t, t}, Reduce: [2]uint32{t, t}}
}

// Constants of msm_plan.h.
const (
	msmMaxChunk  = 1 << 25
	msmMinSeg    = 32
	msmKMerge    = 8
	msmTreeG     = 4
	msmPoolRound = 2 << 20
	msmMaxC      = 21 // the largest window without copies
	msmMaxCPre   = 22 // with precomputed copies
	// MSMMaxDepth is the most precomputed copies of an MSM's bases
	// (ZK_MSM_MAX_DEPTH).
	MSMMaxDepth = 64
)

// msmPlan mirrors zk_msm_plan.
type msmPlan struct {
	c, nwin       int
	depth, g      int // copies read, bucket sets reduced
	m, sentinel   uint32
	keybits       int
	chunk, pairs  uint64
	t0, t1max     uint32
	tred, l, logL uint32
}

func ceilLog2(v uint64) int {
	if v <= 1 {
		return 0
	}
	return bits.Len64(v - 1)
}

// msmCost mirrors zk_msm_cost: the field products of an MSM of n scalars
// with window c and g bucket sets.
func msmCost(n uint64, c, g int) float64 {
	nwin := float64((256 + c - 1) / c)
	return nwin*float64(n)*10.0 + float64(g)*(float64(uint32(1)<<(c-1))*28.0+20000.0)
}

// msmChooseC mirrors zk_msm_choose_c.
func msmChooseC(n uint64) int {
	best, bestCost := 4, 1e300
	for c := 4; c <= msmMaxC; c++ {
		cost := msmCost(n, c, (256+c-1)/c)
		if cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

// msmGroupsOf mirrors zk_msm_groups_of: the bucket sets g of window c over
// depth copies, and the copies g needs.
func msmGroupsOf(c, depth int) (g, used int) {
	nwin := (256 + c - 1) / c
	depth = max(1, min(depth, nwin))
	g = (nwin + depth - 1) / depth
	return g, (nwin + g - 1) / g
}

// msmChoosePre mirrors zk_msm_choose_pre.
func msmChoosePre(n uint64, maxDepth int) (c, d int) {
	bc, bd := msmChooseC(n), 1
	bestCost := msmCost(n, bc, (256+bc-1)/bc)
	for cc := 4; cc <= msmMaxCPre && maxDepth > 1; cc++ {
		g, used := msmGroupsOf(cc, maxDepth)
		if cost := msmCost(n, cc, g); cost < bestCost {
			bestCost, bc, bd = cost, cc, used
		}
	}
	return bc, bd
}

// MSMPrecomputeChoice mirrors zk_msm_precompute_choice: the window c and the
// copies d (at most maxDepth) that precomputing the bases of an MSM over n
// points makes; d = 1 (c = 0) when copies do not pay.
func MSMPrecomputeChoice(n uint64, maxDepth int) (c, d int) {
	if n == 0 || maxDepth < 2 {
		return 0, 1
	}
	maxDepth = min(maxDepth, MSMMaxDepth)
	if uint64(maxDepth)*n > 1<<31-1 {
		maxDepth = int((1<<31 - 1) / n)
	}
	if maxDepth < 2 {
		return 0, 1
	}
	c, d = msmChoosePre(min(n, msmMaxChunk), maxDepth)
	if d < 2 {
		return 0, 1
	}
	return c, d
}

// MSMBasesBytes mirrors zk_msm_bases_bytes: the device memory of n resident
// points of group (1: G1, 2: G2) with depth precomputed copies (1: none).
func MSMBasesBytes(group int, n uint64, depth int) uint64 {
	aff := uint64(96)
	if group == groupG2 {
		aff = 192
	}
	return uint64(max(depth, 1))*n*aff + 16
}

// makeMSMPlan mirrors zk_msm_make_plan: chunks of n scalars, the window
// chosen for one chunk, bases without copies.
func makeMSMPlan(n uint64, residentAccum, residentReduce uint32) msmPlan {
	return makeMSMPlanPre(n, 0, 1, residentAccum, residentReduce)
}

// makeMSMPlanPre mirrors zk_msm_make_plan_pre: as makeMSMPlan over bases
// with preDepth copies for window preC, read when they pay.
func makeMSMPlanPre(n uint64, preC, preDepth int, residentAccum, residentReduce uint32) msmPlan {
	var p msmPlan
	p.chunk = min(n, msmMaxChunk)
	if p.chunk == 0 {
		p.chunk = 1
	}
	p.c = msmChooseC(p.chunk)
	p.nwin = (256 + p.c - 1) / p.c
	p.depth, p.g = 1, p.nwin
	if preDepth > 1 && preC >= 4 {
		g, _ := msmGroupsOf(preC, preDepth)
		if msmCost(p.chunk, preC, g) < msmCost(p.chunk, p.c, p.nwin) {
			p.c = preC
			p.nwin = (256 + p.c - 1) / p.c
			p.g = g
			p.depth = (p.nwin + g - 1) / g
		}
	}
	p.m = 1 << (p.c - 1)
	p.sentinel = uint32(p.g) * p.m
	p.keybits = ceilLog2(uint64(p.sentinel) + 1)
	p.pairs = uint64(p.nwin) * p.chunk
	want := (p.pairs + msmMinSeg - 1) / msmMinSeg
	p.t0 = uint32(min(want, uint64(residentAccum)))
	if p.t0 == 0 {
		p.t0 = 1
	}
	p.t1max = (2*p.t0 + msmKMerge - 1) / msmKMerge
	perWin := residentReduce / uint32(p.g)
	t := uint32(1)
	for t*2 <= perWin && t*2 <= p.m/8 {
		t *= 2
	}
	p.tred = t
	p.l = p.m / t
	p.logL = uint32(ceilLog2(uint64(p.l)))
	return p
}

// msmSortBytesBound mirrors zk_msm_sort_bytes_bound.
func msmSortBytesBound(pairs uint64, keybits int) uint64 {
	const tile, digits, align = 384 * 21, 256, 256
	const portion = ((1 << 28) - 1) / tile * tile
	passes := uint64(keybits+7) / 8
	portions := (pairs + portion - 1) / portion
	blocks := (min(pairs, portion) + tile - 1) / tile
	total := uint64(align - 1)
	for _, s := range []uint64{portions * passes * digits * 4, blocks * digits * 4, portions * passes * 4} {
		total += (s + align - 1) / align * align
	}
	return total
}

// msmWork mirrors zk_msm_work: one MSM's allocations.
type msmWork struct {
	scalars, keys, vals, sortTmp, buckets uint64
	partA, partKA, partB, partKB          uint64
	red, tree, wacc, out                  uint64
	onesPart, onesTree                    uint64
	sortSets                              int
	allocs                                int
	total                                 uint64
}

// Groups of an MSM, as msm.h numbers them.
const (
	groupG1 = 1
	groupG2 = 2
)

// msmOnesThreads mirrors zk_msm_ones_threads.
func msmOnesThreads(nones uint64, residentAccum uint32) uint32 {
	if nones == 0 {
		return 0
	}
	t := min((nones+msmMinSeg-1)/msmMinSeg, uint64(residentAccum))
	if t == 0 {
		t = 1
	}
	k := (nones + t - 1) / t
	return uint32((nones + k - 1) / k)
}

// msmWorkOf mirrors zk_msm_work_of: a dense run has onesThreads 0 and
// pippenger true; a split run the threads of its ones and pippenger false when
// none of its scalars needs Pippenger.
func msmWorkOf(group int, p msmPlan, n uint64, scalarsOnDevice bool, sortBytes uint64, onesThreads uint32, pippenger bool) msmWork {
	fp := uint64(48)
	if group == groupG2 {
		fp = 96
	}
	xyzz, jac := 4*fp, 3*fp
	groups := 2 * uint64(p.g)
	var w msmWork
	if !scalarsOnDevice {
		w.scalars = n * FrBytes
	}
	w.keys = p.pairs * 4
	w.vals = p.pairs * 4
	w.sortTmp = sortBytes
	w.buckets = uint64(p.g) * uint64(p.m) * xyzz
	w.partA = 2 * uint64(p.t0) * xyzz
	w.partKA = 2 * uint64(p.t0) * 4
	w.partB = 2 * uint64(p.t1max) * xyzz
	w.partKB = 2 * uint64(p.t1max) * 4
	w.red = groups * uint64(p.tred) * xyzz
	w.tree = groups * ((uint64(p.tred) + msmTreeG - 1) / msmTreeG) * xyzz
	w.wacc = uint64(p.g) * xyzz
	w.out = jac
	w.onesPart = uint64(onesThreads) * xyzz
	w.onesTree = (uint64(onesThreads) + msmTreeG - 1) / msmTreeG * xyzz
	if !pippenger {
		w.keys, w.vals, w.sortTmp, w.buckets = 0, 0, 0, 0
		w.partA, w.partKA, w.partB, w.partKB, w.red, w.tree, w.wacc = 0, 0, 0, 0, 0, 0, 0
	}
	w.sortSets = 1
	if !scalarsOnDevice && pippenger && p.chunk < n {
		w.sortSets = 2
	}
	// In run_impl's order: scalars, output, the ones', then Pippenger's (the
	// second sort set last, when there is one).
	sizes := []uint64{w.scalars, w.out, w.onesPart, w.onesTree, w.keys, w.keys, w.vals,
		w.vals, w.sortTmp, w.buckets, w.partA, w.partKA, w.partB, w.partKB, w.red, w.tree, w.wacc,
		w.keys, w.keys, w.vals, w.vals}
	for i, b := range sizes {
		switch {
		case i == 0 && scalarsOnDevice,
			(i == 2 || i == 3) && onesThreads == 0,
			i >= 4 && !pippenger,
			i >= 17 && w.sortSets < 2:
			continue
		}
		if b == 0 {
			b = 16
		}
		w.total += (b + msmPoolRound - 1) / msmPoolRound * msmPoolRound
		w.allocs++
	}
	return w
}

// MSMWorkBytes is the device working memory one MSM of n scalars already on
// the device takes from the MSM pool (group 1: G1, 2: G2) on a device of
// residency r: the sizes of msm_plan.h with the radix sort's bound, each
// rounded up to the pool's granularity. With the device's own residency it is
// what msm.cu allocates; with BoundResidency an upper bound.
func MSMWorkBytes(group int, n uint64, r Residency) uint64 {
	if n == 0 {
		return 0
	}
	g := 0
	if group == groupG2 {
		g = 1
	}
	p := makeMSMPlan(n, r.Accum[g], r.Reduce[g])
	return msmWorkOf(group, p, n, true, msmSortBytesBound(p.pairs, p.keybits), 0, true).total
}

// MSMSplitWorkBytes bounds the device working memory of one witness-aware
// (split) MSM over a classification of n scalars, whatever their counts, as
// zk_msm_split_work_bytes does: every scalar through Pippenger and every one a
// 1 at once (a split run's rest and ones are each at most n).
func MSMSplitWorkBytes(group int, n uint64, r Residency) uint64 {
	return MSMSplitWorkBytesPre(group, n, 0, 1, r)
}

// MSMWorkBytesPre is MSMWorkBytes over bases with depth precomputed copies
// for window c (MSMPrecomputeChoice; depth 1: none), as zk_msm_work_bytes
// counts a handle with copies.
func MSMWorkBytesPre(group int, n uint64, c, depth int, r Residency) uint64 {
	if n == 0 {
		return 0
	}
	g := group - 1
	p := makeMSMPlanPre(n, c, depth, r.Accum[g], r.Reduce[g])
	return msmWorkOf(group, p, n, true, msmSortBytesBound(p.pairs, p.keybits), 0, true).total
}

// MSMSplitWorkBytesPre is MSMSplitWorkBytes over bases with depth copies for
// window c, as zk_msm_split_work_bytes counts it: a rest shorter than the
// crossover (msmPlainBelow) plans without the copies, in another window, so
// the larger of the plan of n and the plain plan of the crossover.
func MSMSplitWorkBytesPre(group int, n uint64, c, depth int, r Residency) uint64 {
	if n == 0 {
		return 0
	}
	g := group - 1
	ones := msmOnesThreads(n, r.Accum[g])
	plain := n
	if depth >= 2 {
		plain = msmPlainBelow(n, c, depth)
	}
	var total uint64
	for pre := range 2 {
		if (pre == 1 && plain == n) || (pre == 0 && plain == 0) {
			continue
		}
		var p msmPlan
		if pre == 1 {
			p = makeMSMPlanPre(n, c, depth, r.Accum[g], r.Reduce[g])
		} else {
			p = makeMSMPlan(plain, r.Accum[g], r.Reduce[g])
		}
		total = max(total, msmWorkOf(group, p, n, true, msmSortBytesBound(p.pairs, p.keybits), ones, true).total)
	}
	return total
}

// msmPlainBelow mirrors zk_msm_plain_below: the largest m <= n whose plan
// over the copies reads none (0: all read them).
func msmPlainBelow(n uint64, c, depth int) uint64 {
	if n == 0 || makeMSMPlanPre(n, c, depth, 1, 1).depth < 2 {
		return n
	}
	lo, hi := uint64(0), n
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if makeMSMPlanPre(mid, c, depth, 1, 1).depth < 2 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// msmSelectBytesBound mirrors zk_msm_select_bytes_bound.
func msmSelectBytesBound(n uint64) uint64 { return (n/64+1+32)*16 + 512 }

// MSMClassifyBytes is the device memory W's classification for the split
// takes for n scalars (zk_msm_classify_work): two index lists, the classes,
// the counts and the selection's storage, each as the pool rounds it.
func MSMClassifyBytes(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	var total uint64
	for _, b := range []uint64{n * 4, n * 4, n, 8, msmSelectBytesBound(n)} {
		total += (b + msmPoolRound - 1) / msmPoolRound * msmPoolRound
	}
	return total
}

// KeyShape is what the device accounting needs of a proving key.
type KeyShape struct {
	LogN     uint32 // the domain is 2^LogN
	NbWires  uint64
	NbPublic uint64
	NbA, NbB uint64 // points of G1 A and of G1 B (and G2 B), infinity left out
	NbK, NbZ uint64
}

// ShapeOf returns pk's shape.
func ShapeOf(pk *keyfile.ProvingKey) KeyShape {
	return KeyShape{
		LogN: uint32(bits.TrailingZeros64(pk.DomainSize)), NbWires: pk.NbWires, NbPublic: pk.NbPublic,
		NbA: uint64(len(pk.G1A)), NbB: uint64(len(pk.G1B)), NbK: uint64(len(pk.G1K)), NbZ: uint64(len(pk.G1Z)),
	}
}

// ProofWorkBytes is the device working memory one proof in flight takes
// beyond its key and slot: the four G1 MSMs run one after another on the
// proof's stream (each reuses what the one before freed; groth16.cu runs the
// longest first) while the G2 MSM runs on the second stream with its own.
// chunk > 0 is a streamed key's chunk length: every MSM then runs over at
// most chunk points, dense. A resident key's MSMs over W (A, B, K, G2 B) may
// run split (the switch can change between proofs): counted split, which
// bounds dense too, plus W's classification, held for the whole proof; as
// groth16.cu's key_work_init counts them.
func ProofWorkBytes(s KeyShape, chunk uint64, r Residency) uint64 {
	return ProofWorkBytesDepth(s, chunk, r, 1)
}

// ProofWorkBytesDepth is ProofWorkBytes for a resident key whose point sets
// keep up to depth precomputed copies each (KeyCopiesOf; 1: none); a streamed
// key has none.
func ProofWorkBytesDepth(s KeyShape, chunk uint64, r Residency, depth int) uint64 {
	g1, g2 := proofStreamsWork(s, chunk, r, depth)
	return ProofPoolBytes(g1, g2)
}

// MSMPoolBlock is the step in which the MSM pool reserves device memory: every
// reservation of a proof TestGroth16ProofDeviceMemory measured was a multiple
// of 32 MiB, once above the sum of its allocations (BENCHMARKS.md, "The G1
// MSM's upload in pieces").
const MSMPoolBlock = 32 << 20

// ProofPoolBytes is what the MSM pool reserves for a proof whose G1 stream
// allocates g1 bytes and G2 stream g2 (each allocation rounded as msm_plan.h
// rounds it): each stream's share rounded up to whole MSMPoolBlocks, the last
// block of each possibly part used.
func ProofPoolBytes(g1, g2 uint64) uint64 {
	blocks := func(b uint64) uint64 { return (b + MSMPoolBlock - 1) / MSMPoolBlock * MSMPoolBlock }
	return blocks(g1) + blocks(g2)
}

// proofStreamsWork is the MSM working memory of one proof on its G1 stream
// (W's classification included) and on its G2 stream, as groth16.cu's
// key_work_init counts them (KeyInfo.WorkG1, WorkG2).
func proofStreamsWork(s KeyShape, chunk uint64, r Residency, depth int) (g1, g2 uint64) {
	if chunk == 0 {
		cp := KeyCopiesOf(s, depth)
		g1 := MSMWorkBytesPre(groupG1, s.NbZ, cp[3].C, cp[3].D, r)
		if s.NbK > 0 {
			g1 = max(g1, MSMSplitWorkBytesPre(groupG1, s.NbWires, cp[2].C, cp[2].D, r))
		}
		// Resident A and B are expanded to every wire.
		g1 = max(g1, MSMSplitWorkBytesPre(groupG1, s.NbWires, cp[0].C, cp[0].D, r))
		g1 = max(g1, MSMSplitWorkBytesPre(groupG1, s.NbWires, cp[1].C, cp[1].D, r))
		return g1 + MSMClassifyBytes(s.NbWires), MSMSplitWorkBytesPre(groupG2, s.NbWires, cp[4].C, cp[4].D, r)
	}
	lim := func(n uint64) uint64 {
		if chunk > 0 {
			return min(n, chunk)
		}
		return n
	}
	nA, nB := s.NbWires, s.NbWires // resident A and B are expanded to every wire
	if chunk > 0 {
		nA, nB = s.NbA, s.NbB // streamed ones are not
	}
	for _, n := range []uint64{nA, nB, s.NbK, s.NbZ} {
		g1 = max(g1, MSMWorkBytes(groupG1, lim(n), r))
	}
	return g1, MSMWorkBytes(groupG2, lim(nB), r)
}

// SetCopies is the precomputed copies of one of a resident key's point sets
// (msm.h's zk_msm_precompute): the window C they are made for (0: none) and
// their count D (1: the points alone).
type SetCopies struct{ C, D int }

// KeyCopiesOf is the copies a resident key of shape s keeps of its point sets
// A, B, K, Z (G1) and B (G2) with at most depth each: MSMPrecomputeChoice for
// each set's length, as groth16.cu asks msm.cu for them.
func KeyCopiesOf(s KeyShape, depth int) [5]SetCopies {
	var out [5]SetCopies
	for i, n := range []uint64{s.NbWires, s.NbWires, s.NbK, s.NbZ, s.NbWires} {
		out[i].C, out[i].D = MSMPrecomputeChoice(n, depth)
	}
	return out
}

// KeyCopiesBytes is the device memory the copies of KeyCopiesOf(s, depth)
// take beyond the points themselves.
func KeyCopiesBytes(s KeyShape, depth int) uint64 {
	var total uint64
	cp := KeyCopiesOf(s, depth)
	for i, n := range []uint64{s.NbWires, s.NbWires, s.NbK, s.NbZ, s.NbWires} {
		group := groupG1
		if i == 4 {
			group = groupG2
		}
		total += MSMBasesBytes(group, n, cp[i].D) - MSMBasesBytes(group, n, 1)
	}
	return total
}

// KeyDeviceBytes is the device memory a proving key takes once uploaded: G1 A
// and B and G2 B expanded to every wire, G1 K and Z as they are.
func KeyDeviceBytes(pk *keyfile.ProvingKey) uint64 {
	return pk.NbWires*(96+96+192) + uint64(len(pk.G1K)+len(pk.G1Z))*96
}

// StreamKeyDeviceBytes is the device memory a streamed key holds for chunks
// of chunk points: two chunk buffers of G1 points and two of G2 points (each
// an MSM handle: 16 bytes beyond its points), two buffers of gathered scalars
// for each group, and the wire index of every A and B point.
func StreamKeyDeviceBytes(s KeyShape, chunk uint64) uint64 {
	g1 := 2 * (chunk*96 + 16)
	g2 := 2 * (chunk*192 + 16)
	scalars := 2 * 2 * chunk * FrBytes
	return g1 + g2 + scalars + (s.NbA+s.NbB)*4
}

// SlotDeviceBytes is the device memory one slot (Groth16Slot) holds for a
// domain of 2^logN and nwires wires: W, A, B and C, and the area a compact W
// needs beside them (CompactDeviceBytes).
func SlotDeviceBytes(logN uint32, nwires int) uint64 {
	return (uint64(nwires)+3*(uint64(1)<<logN))*FrBytes + CompactDeviceBytes(nwires)
}

// compactRankWords is csrc/groth16.h's ZK_G16_COMPACT_RANK_WORDS: the bitmap
// words one rank block of the expansion covers.
const compactRankWords = 1024

// CompactWords is the uint64 words of each bitmap of a compact W of nwires
// wires (csrc/groth16.h's zk_g16_compact_words): wire i is bit i%64 of word
// i/64.
func CompactWords(nwires int) int { return (nwires + 63) / 64 }

// CompactDeviceBytes is the device memory a slot holds for a compact W of
// nwires wires besides its W, A, B and C (csrc/groth16.h's
// zk_g16_compact_device_bytes): both bitmaps, four flag words and the ranks.
// The values borrow the slot's A, B and C buffers until A and B are evaluated.
func CompactDeviceBytes(nwires int) uint64 {
	w := uint64(CompactWords(nwires))
	return 16*w + 16 + 4*w + 4*((w+compactRankWords-1)/compactRankWords)
}

// ConstraintsDeviceBytes is the device memory SetConstraints takes for m
// beside the key (csrc/groth16.h's zk_g16_constraints_device_bytes): the
// coefficient table, each matrix's row index and 8 bytes a term.
func ConstraintsDeviceBytes(m *constraints.Matrices) uint64 {
	terms := uint64(m.A.Terms() + m.B.Terms() + m.C.Terms())
	return 32*uint64(len(m.Coefficients)) + 3*4*(m.NbConstraints()+1) + 8*terms
}

// SlotHostBytes is the pinned host memory one slot holds: the staging of W, A
// and B.
func SlotHostBytes(logN uint32, nwires int) uint64 {
	return (uint64(nwires) + 2*(uint64(1)<<logN)) * FrBytes
}

// PartitionDeviceBytes is ProofWorkBytes for a key with a domain of 2^logN
// and nwires wires, every A and B point present and the key resident: what
// Describe reports per constraint before any key is loaded.
func PartitionDeviceBytes(logN uint32, nwires int, r Residency) uint64 {
	n := uint64(1) << logN
	w := uint64(nwires)
	return ProofWorkBytes(KeyShape{LogN: logN, NbWires: w, NbA: w, NbB: w, NbK: w, NbZ: n - 1}, 0, r)
}

// Smallest and largest streamed chunk (points).
const (
	MinStreamChunk = 1 << 16
	MaxStreamChunk = msmMaxChunk
)

// DevicePlan is how a key and its slots use the device: resident, or
// streamed in chunks.
type DevicePlan struct {
	Chunk      uint64 // points per streamed chunk; 0: the key is resident
	Depth      int    // a resident key's precomputed copies per point set, at most (KeyCopiesOf; 0, 1: none)
	KeyBytes   uint64 // the key's point sets (or its streaming buffers) and the NTT tables
	SlotBytes  uint64 // one slot's buffers
	ProofBytes uint64 // one proof's working memory
	Slots      int
}

// Streamed reports whether the key's points stay on the host.
func (p DevicePlan) Streamed() bool { return p.Chunk > 0 }

// LoadBytes is what loading the key reserves: the key and its slots.
func (p DevicePlan) LoadBytes() uint64 { return p.KeyBytes + uint64(p.Slots)*p.SlotBytes }

// Total is the key, its slots and every slot's proof at once.
func (p DevicePlan) Total() uint64 { return p.LoadBytes() + uint64(p.Slots)*p.ProofBytes }

func (p DevicePlan) String() string {
	mode := "resident"
	if p.Depth > 1 {
		mode = fmt.Sprintf("resident with up to %d copies of its points", p.Depth)
	}
	if p.Streamed() {
		mode = fmt.Sprintf("streamed in chunks of %d points", p.Chunk)
	}
	return fmt.Sprintf("%s: key %d MiB, %d slots of %d MiB, %d MiB per proof in flight", mode,
		p.KeyBytes>>20, p.Slots, p.SlotBytes>>20, p.ProofBytes>>20)
}

// PlanDevice decides how a key of shape s with slots slots uses room bytes of
// device memory: resident when the key, its slots and every slot's proof fit;
// otherwise streamed from host memory in the largest power-of-two chunk that
// fits; an error when not even the smallest chunk does. r is the device's
// residency (DeviceResidency, or BoundResidency).
//
// A resident key also gets precomputed copies of its points (faster MSMs,
// msm.h's zk_msm_precompute), at most MSMPrecomputeDepth() per set, as many
// as fit in half the room its plan without them leaves (the other half stays
// for other keys); a plan resident without copies never turns streamed, nor
// loses slots (the caller tries slots first), for them.
func PlanDevice(s KeyShape, slots int, room uint64, r Residency) (DevicePlan, error) {
	maxDepth, err := MSMPrecomputeDepth()
	if err != nil {
		return DevicePlan{}, err
	}
	tables := DomainBytes(int(s.LogN))
	p := DevicePlan{
		KeyBytes:   KeyShapeDeviceBytes(s) + tables,
		SlotBytes:  SlotDeviceBytes(s.LogN, int(s.NbWires)),
		ProofBytes: ProofWorkBytes(s, 0, r),
		Slots:      slots,
		Depth:      1,
	}
	if p.Total() <= room {
		spare := (room - p.Total()) / 2
		for d := maxDepth; d >= 2; d-- {
			q := p
			q.Depth = d
			q.KeyBytes = p.KeyBytes + KeyCopiesBytes(s, d)
			q.ProofBytes = ProofWorkBytesDepth(s, 0, r, d)
			if q.Total() <= p.Total()+spare {
				return q, nil
			}
		}
		return p, nil
	}
	longest := max(s.NbA, s.NbB, s.NbK, s.NbZ, 1)
	top := min(uint64(1)<<ceilLog2(longest), MaxStreamChunk)
	for chunk := top; chunk >= MinStreamChunk; chunk /= 2 {
		q := p
		q.Chunk = chunk
		q.Depth = 0
		q.KeyBytes = StreamKeyDeviceBytes(s, chunk) + tables
		q.ProofBytes = ProofWorkBytes(s, chunk, r)
		if q.Total() <= room {
			return q, nil
		}
	}
	return p, fmt.Errorf("gpu: the key needs %d MiB resident and %d slots need %d MiB even with its points streamed in chunks of %d; %d MiB are available: %w",
		p.KeyBytes>>20, slots, uint64(slots)*p.SlotBytes>>20, MinStreamChunk, room>>20, ErrOutOfMemory)
}

// MSMPrecomputeDepth is the most precomputed copies PlanDevice gives a
// resident key's point sets, from ZKHOST_CUDA_MSM_PRECOMPUTE: unset or empty,
// MSMMaxDepth; 0 or 1, none (off); 2..64, at most that many.
func MSMPrecomputeDepth() (int, error) {
	v := os.Getenv("ZKHOST_CUDA_MSM_PRECOMPUTE")
	if v == "" {
		return MSMMaxDepth, nil
	}
	d, err := strconv.Atoi(v)
	if err != nil || d < 0 || d > MSMMaxDepth {
		return 0, fmt.Errorf("gpu: ZKHOST_CUDA_MSM_PRECOMPUTE=%q: want 0 (off) or at most %d copies of a key's points: %w", v, MSMMaxDepth, ErrInvalid)
	}
	return max(d, 1), nil
}

// KeyShapeDeviceBytes is KeyDeviceBytes from a key's shape.
func KeyShapeDeviceBytes(s KeyShape) uint64 {
	return s.NbWires*(96+96+192) + (s.NbK+s.NbZ)*96
}
