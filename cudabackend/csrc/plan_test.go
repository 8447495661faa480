package csrc

import (
	"math/bits"
	"testing"
)

// The plan of msm_plan.h is the only one: msm.cu allocates from it and
// cudabackend/gpu's estimates call it. These tests hold it to what the kernels need of it
// (every buffer large enough for the work, every thread count within the
// device's residency), to the bounds admission relies on (every size grows
// with the residency; the split bound covers every split run), and to values
// worked out by hand.

// planCases is the grid the plan tests walk: sizes from one scalar to beyond
// a chunk, devices from one thread to every SM full, dense and split runs,
// bases with and without precomputed copies.
var planCases = struct {
	ns        []uint64
	residents [][2]uint32
}{
	ns:        []uint64{1, 2, 100, 4095, 1 << 12, 1<<16 + 1, 1 << 20, 1<<22 + 3, 1 << 24, 1<<24 + 7, 1 << 25, 1<<26 + 5},
	residents: [][2]uint32{{1, 1}, {128, 128}, {132 * 256, 132 * 512}, {132 * 2048, 132 * 2048}, {16 * 2048, 8 * 2048}},
}

// planCopies is the copies the plan tests try for n points: none, fixed
// (window, depth) pairs the cost model takes or declines at each size, and
// what precomputing bases of n points (or of 2^24) picks at several limits.
func planCopies(n uint64) [][2]int {
	out := [][2]int{{0, 1}, {20, 13}, {16, 3}, {22, 12}, {13, 5}, {8, 32}}
	for _, maxd := range []int{2, 5, 64} {
		for _, on := range []uint64{n, 1 << 24} {
			c, d := PrecomputeChoice(on, maxd)
			out = append(out, [2]int{c, d})
		}
	}
	return out
}

func ceilDiv(a, b uint64) uint64 { return (a + b - 1) / b }

// checkPlan checks plan p of n scalars, made over copies pre on a device of
// residency res, against what the kernels need of it.
func checkPlan(t *testing.T, p Plan, n uint64, pre [2]int, res [2]uint32) {
	t.Helper()
	bad := func(what string) { t.Errorf("n %d, copies %v, resident %v: %s: plan %+v", n, pre, res, what, p) }
	if p.C < 4 || p.C > 22 || p.Depth == 1 && p.C > 21 {
		bad("window outside [4, 21] (22 with copies)")
	}
	if p.C*p.NWin < 256 || p.C*(p.NWin-1) >= 256 {
		bad("the windows do not cover a 256-bit scalar exactly")
	}
	if p.Depth < 1 || p.Depth > max(pre[1], 1) || p.Depth > 1 && p.C != pre[0] {
		bad("reads copies it was not given")
	}
	if p.G*p.Depth < p.NWin || p.G*(p.Depth-1) >= p.NWin {
		bad("the bucket sets and the copies read do not cover the windows")
	}
	if p.M != 1<<(p.C-1) || p.Sentinel != uint32(p.G)*p.M || p.Sentinel >= 1<<p.KeyBits || p.Sentinel < 1<<(p.KeyBits-1) {
		bad("the buckets, or the sort key of a zero digit, do not fit the sort's bits")
	}
	if p.Chunk != max(min(n, MaxChunk), 1) || p.Pairs != uint64(p.NWin)*p.Chunk {
		bad("chunk or digit pairs")
	}
	if p.T0 < 1 || p.T0 > max(res[0], 1) || uint64(p.T0) > ceilDiv(p.Pairs, 32) || uint64(p.T0)*32 < min(p.Pairs, uint64(res[0])*32) {
		bad("level-0 threads beyond the pairs or the residency")
	}
	if p.T1Max*8 < 2*p.T0 {
		bad("the first merge level has too few threads for level 0's runs")
	}
	if bits.OnesCount32(p.TRed) != 1 || p.TRed*p.L != p.M || p.TRed > max(p.M/8, 1) || p.TRed > 1 && p.TRed*uint32(p.G) > res[1] || 1<<p.LogL < p.L || p.LogL > 0 && 1<<(p.LogL-1) >= p.L {
		bad("the reduction's segments do not tile the buckets within the residency")
	}
}

// checkWork checks w, the allocations of plan p over n scalars, against the
// plan: every buffer holds its share of the work, nothing is allocated that
// the run does not use, and the total is the allocations as the pool rounds
// them, in run_impl's order.
func checkWork(t *testing.T, w Work, group int, p Plan, n uint64, onDev bool, sortBytes uint64, ones uint32, pippenger bool) {
	t.Helper()
	bad := func(what string) {
		t.Errorf("group %d, n %d, on device %v, ones %d, pippenger %v: %s: %+v", group, n, onDev, ones, pippenger, what, w)
	}
	xyzz := uint64(192) // four Fq coordinates
	if group == G2 {
		xyzz = 384
	}
	if onDev != (w.Scalars == 0) || !onDev && w.Scalars != n*32 {
		bad("host scalars not copied whole, or device scalars copied")
	}
	if w.Out != xyzz/4*3 || w.OnesPart != uint64(ones)*xyzz || w.OnesTree < ceilDiv(uint64(ones), 4)*xyzz {
		bad("output or the ones' buffers")
	}
	want := uint64(0) // the allocations' sum, as the pool rounds each
	round := func(b uint64) { want += ceilDiv(max(b, 16), 2<<20) * (2 << 20) }
	allocs := 1
	round(w.Out)
	if !onDev {
		round(w.Scalars)
		allocs++
	}
	if ones > 0 {
		round(w.OnesPart)
		round(w.OnesTree)
		allocs += 2
	}
	if !pippenger {
		if w.Keys|w.Vals|w.SortTmp|w.Buckets|w.PartA|w.PartB|w.Red|w.Tree|w.WAcc != 0 || w.SortSets != 1 {
			bad("Pippenger's buffers allocated for a run without Pippenger")
		}
	} else {
		if w.Keys < p.Pairs*4 || w.Vals < p.Pairs*4 || w.SortTmp != sortBytes {
			bad("the sort's buffers do not hold the chunk's digit pairs")
		}
		if w.Buckets != uint64(p.G)*uint64(p.M)*xyzz || w.WAcc != uint64(p.G)*xyzz {
			bad("buckets or window sums")
		}
		if w.PartA != 2*uint64(p.T0)*xyzz || w.PartKA != 2*uint64(p.T0)*4 || w.PartB != 2*uint64(p.T1Max)*xyzz || w.PartKB != 2*uint64(p.T1Max)*4 {
			bad("the merge levels' partial runs")
		}
		if w.Red != 2*uint64(p.G)*uint64(p.TRed)*xyzz || w.Tree < 2*uint64(p.G)*ceilDiv(uint64(p.TRed), 4)*xyzz {
			bad("the reduction's buffers")
		}
		twoSets := !onDev && p.Chunk < n
		if twoSets != (w.SortSets == 2) || w.SortSets < 1 || w.SortSets > 2 {
			bad("host scalars in more than one chunk need a second set of sort buffers, others none")
		}
		for range w.SortSets {
			round(w.Keys)
			round(w.Keys)
			round(w.Vals)
			round(w.Vals)
			allocs += 4
		}
		for _, b := range []uint64{w.SortTmp, w.Buckets, w.PartA, w.PartKA, w.PartB, w.PartKB, w.Red, w.Tree, w.WAcc} {
			round(b)
			allocs++
		}
	}
	if w.Allocs != allocs || w.Total != want {
		bad("allocations or their pooled total differ from the buffers'")
	}
}

// TestPlan walks the plan over sizes from one scalar to beyond a chunk,
// both groups, scalars on the host or the device, several device sizes,
// split runs (their ones' buffers, with or without Pippenger work) and bases
// with precomputed copies, and checks each plan and its allocations against
// the work; and that the memory never shrinks on a device with more threads
// resident (BoundResidency's estimates are upper bounds because of it).
func TestPlan(t *testing.T) {
	type run struct {
		nones     func(n uint64) uint64
		pippenger bool
	}
	runs := []run{
		{func(uint64) uint64 { return 0 }, true},         // dense
		{func(n uint64) uint64 { return n }, true},       // split
		{func(n uint64) uint64 { return 3*n + 1 }, true}, // split, more ones than rest
		{func(n uint64) uint64 { return n }, false},      // split, only 0s and 1s
	}
	full := [2]uint32{132 * 2048, 132 * 2048}
	sawCopies, sawTwoSets := 0, 0
	for _, group := range []int{G1, G2} {
		for _, n := range planCases.ns {
			for _, pre := range planCopies(n) {
				for _, r := range planCases.residents {
					p := MakePlanPre(n, pre[0], pre[1], r[0], r[1])
					checkPlan(t, p, n, pre, r)
					if p.Depth > 1 {
						sawCopies++
					}
					pf := MakePlanPre(n, pre[0], pre[1], full[0], full[1])
					for _, onDev := range []bool{false, true} {
						for _, rn := range runs {
							ones := OnesThreads(rn.nones(n), r[0])
							if rn.nones(n) > 0 && (ones < 1 || ones > max(r[0], 1)) || rn.nones(n) == 0 && ones != 0 {
								t.Errorf("%d ones on %d resident threads: %d threads", rn.nones(n), r[0], ones)
							}
							sb := SortBytesBound(p.Pairs, p.KeyBits)
							w := WorkOf(group, p, n, onDev, sb, ones, rn.pippenger)
							checkWork(t, w, group, p, n, onDev, sb, ones, rn.pippenger)
							if w.SortSets == 2 {
								sawTwoSets++
							}
							wf := WorkOf(group, pf, n, onDev, SortBytesBound(pf.Pairs, pf.KeyBits), OnesThreads(rn.nones(n), full[0]), rn.pippenger)
							if wf.Total < w.Total {
								t.Errorf("group %d, n %d, copies %v: %d bytes with every SM full, %d with %v resident", group, n, pre, wf.Total, w.Total, r)
							}
						}
					}
				}
			}
		}
	}
	if sawCopies == 0 || sawTwoSets == 0 {
		t.Errorf("%d plans read precomputed copies, %d runs had two sort sets: want some of each", sawCopies, sawTwoSets)
	}
}

// TestWorkBounds checks WorkBound and SplitWorkBound against the plans they
// bound: the dense figure is the plan's own work over device scalars, and
// the split figure without copies the plan of n with every scalar a 1.
func TestWorkBounds(t *testing.T) {
	const accum, reduce = 132 * 2048, 132 * 2048
	for _, group := range []int{G1, G2} {
		for _, n := range planCases.ns {
			p := MakePlan(n, accum, reduce)
			dense := WorkOf(group, p, n, true, SortBytesBound(p.Pairs, p.KeyBits), 0, true).Total
			if got := WorkBound(group, n, 0, 1, accum, reduce); got != dense {
				t.Errorf("WorkBound(%d, %d) = %d, the plan's work %d", group, n, got, dense)
			}
			split := WorkOf(group, p, n, true, SortBytesBound(p.Pairs, p.KeyBits), OnesThreads(n, accum), true).Total
			if got := SplitWorkBound(group, n, 0, 1, accum, reduce); got != split || got < dense {
				t.Errorf("SplitWorkBound(%d, %d) = %d, want the plan's work with every scalar a 1, %d (dense %d)", group, n, got, split, dense)
			}
		}
		if WorkBound(group, 0, 0, 1, accum, reduce) != 0 || SplitWorkBound(group, 0, 0, 1, accum, reduce) != 0 {
			t.Errorf("group %d: an MSM of no scalars takes memory", group)
		}
	}
}

// TestPrecomputeChoice checks the copies precomputing n points makes
// under limits from none to beyond ZK_MSM_MAX_DEPTH: never more than asked
// nor past a 31-bit point index, a window with copies only when there are
// copies, and a plan of the points' own length that reads every copy made
// (the choice and the plan weigh the same cost); then the crossover below
// which a plan reads none, and the copies' memory.
func TestPrecomputeChoice(t *testing.T) {
	for _, n := range append(planCases.ns, 0, 1<<27, 1<<30) {
		for _, maxd := range []int{-1, 0, 1, 2, 3, 7, 13, 16, 64, 65} {
			c, d := PrecomputeChoice(n, maxd)
			if d > max(min(maxd, MaxDepth), 1) || d < 1 || d > 1 && uint64(d)*n >= 1<<31 {
				t.Errorf("precompute choice for %d points, depth <= %d: %d copies", n, maxd, d)
			}
			if (d == 1) != (c == 0) || d > 1 && (c < 4 || c > 22) {
				t.Errorf("precompute choice for %d points, depth <= %d: window %d with %d copies", n, maxd, c, d)
			}
			if d > 1 {
				if p := MakePlanPre(n, c, d, 1, 1); p.Depth != d || p.C != c {
					t.Errorf("%d points with c=%d d=%d: their own plan reads %d copies in window %d", n, c, d, p.Depth, p.C)
				}
			}
			x := PlainBelow(n, c, d)
			if x > n || d == 1 && x != n {
				t.Errorf("crossover below %d points over c=%d d=%d: %d", n, c, d, x)
			}
			if d > 1 && x > 0 && MakePlanPre(x, c, d, 1, 1).Depth > 1 || d > 1 && x < n && MakePlanPre(x+1, c, d, 1, 1).Depth < 2 {
				t.Errorf("crossover below %d points over c=%d d=%d: %d is not where the plans start reading copies", n, c, d, x)
			}
			for _, group := range []int{G1, G2} {
				point := uint64(96 * group)
				if got := BasesBytes(group, n, d); got != uint64(d)*n*point+16 {
					t.Errorf("bases of %d points of group %d, %d copies: %d bytes, want %d points of %d bytes and 16 of slack", n, group, d, got, uint64(d)*n, point)
				}
			}
		}
	}
	if got := BasesBytes(G1, 10, 0); got != 10*96+16 {
		t.Errorf("bases with depth 0: %d bytes, want the points alone", got)
	}
}

// TestClassifyWork checks the classification's memory: two lists of 4
// bytes a scalar and a class byte each, the counts and the selection's
// storage, each allocation a whole number of the pool's 2 MiB.
func TestClassifyWork(t *testing.T) {
	if got := ClassifyWork(0); got != 0 {
		t.Errorf("classifying no scalars takes %d bytes", got)
	}
	if got := ClassifyWork(1); got != 5*2<<20 {
		t.Errorf("classifying one scalar takes %d bytes, want five allocations of 2 MiB", got)
	}
	for _, n := range planCases.ns {
		got := ClassifyWork(n)
		if got%(2<<20) != 0 || got < 9*n || got > 9*n+n/4+5*2<<20+2048 {
			t.Errorf("classifying %d scalars takes %d bytes, want 9 a scalar and the selection's, in 2 MiB blocks", n, got)
		}
	}
}

// TestCompactAndSlotSizes checks groth16.h's sizes of a compact W, a slot, a
// streamed key and a constraint system against values worked out by hand.
func TestCompactAndSlotSizes(t *testing.T) {
	for _, tc := range []struct {
		nwires, words int
		device        uint64 // both bitmaps, four flag words, a rank word per bitmap word and per 1024 of them
	}{
		{1, 1, 16 + 16 + 4 + 4},
		{63, 1, 40},
		{64, 1, 40},
		{65, 2, 32 + 16 + 8 + 4},
		{1 << 12, 64, 64*16 + 16 + 64*4 + 4},
		{64*1024 + 1, 1025, 1025*16 + 16 + 1025*4 + 2*4},
		{64*1024*3 - 1, 3072, 3072*16 + 16 + 3072*4 + 3*4},
	} {
		if got := CompactWords(tc.nwires); got != tc.words {
			t.Errorf("CompactWords(%d) = %d, want %d", tc.nwires, got, tc.words)
		}
		if got := CompactDeviceBytes(tc.nwires); got != tc.device {
			t.Errorf("CompactDeviceBytes(%d) = %d, want %d", tc.nwires, got, tc.device)
		}
	}
	// A slot of 2^10 rows and 1000 wires: W, then A, B, C of the domain, and
	// a compact W's area; staging for W, A and B.
	if got, want := SlotDeviceBytes(1000, 10), uint64(1000+3*1024)*32+CompactDeviceBytes(1000); got != want {
		t.Errorf("SlotDeviceBytes(2^10, 1000) = %d, want %d", got, want)
	}
	if got, want := SlotHostBytes(1000, 10), uint64(1000+2*1024)*32; got != want {
		t.Errorf("SlotHostBytes(2^10, 1000) = %d, want %d", got, want)
	}
	// Streamed in chunks of 2^16: two G1 and two G2 chunk buffers with their
	// handles' slack, four of scalars, a wire index of each A and B point.
	// BN254's points are two thirds of BLS12-381's.
	for _, tc := range []struct {
		curve  int
		g1, g2 uint64
	}{{CurveBLS12381, 96, 192}, {CurveBN254, 64, 128}} {
		if got, want := StreamKeyDeviceBytes(tc.curve, 1<<16, 100, 50, false), 2*(1<<16*tc.g1+16)+2*(1<<16*tc.g2+16)+4*(1<<16)*32+150*4; got != want {
			t.Errorf("StreamKeyDeviceBytes(curve %d, chunk 2^16) = %d, want %d", tc.curve, got, want)
		}
		// Resident: A and B and G2 B over the 100 wires, K's 97, Z's 63.
		if got, want := ResidentKeyDeviceBytes(tc.curve, 100, 97, 63), (2*100+97+63)*tc.g1+100*tc.g2; got != want {
			t.Errorf("ResidentKeyDeviceBytes(curve %d) = %d, want %d", tc.curve, got, want)
		}
	}
	// 5 coefficients of 32 bytes, three row indexes of 3 words, 6 terms of 8 bytes.
	if got, want := ConstraintsDeviceBytes(2, 5, 6), uint64(5*32+3*3*4+6*8); got != want {
		t.Errorf("ConstraintsDeviceBytes(2 rows, 5 coefficients, 6 terms) = %d, want %d", got, want)
	}
}
