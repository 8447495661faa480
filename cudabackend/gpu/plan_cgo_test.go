//go:build cgo

package gpu

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/constraints"
)

// TestMSMWorkMatchesPlanHeader checks that memplan.go (the admission estimate)
// computes what csrc/msm_plan.h (the sizes msm.cu allocates) computes, field by
// field, for sizes from one scalar to beyond a chunk, both groups, scalars on
// the host or the device, several device sizes, split runs (their ones'
// buffers, with or without Pippenger work), and bases with precomputed copies
// (the windows and depths zk_msm_precompute picks, and fixed ones the cost
// model takes or declines at each size).
func TestMSMWorkMatchesPlanHeader(t *testing.T) {
	ns := []uint64{1, 2, 100, 4095, 1 << 12, 1<<16 + 1, 1 << 20, 1<<22 + 3, 1 << 24, 1<<24 + 7, 1 << 25, 1<<26 + 5}
	residents := [][2]uint32{{1, 1}, {128, 128}, {132 * 256, 132 * 512}, {132 * 2048, 132 * 2048}, {16 * 2048, 8 * 2048}}
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
	// Copies: none, fixed (window, depth) pairs, and what precomputing
	// bases of n points (or of 2^24) picks at several depth limits.
	pres := func(n uint64) [][2]int {
		out := [][2]int{{0, 1}, {20, 13}, {16, 3}, {22, 12}, {13, 5}, {8, 32}}
		for _, maxd := range []int{2, 5, 64} {
			for _, on := range []uint64{n, 1 << 24} {
				c, d := MSMPrecomputeChoice(on, maxd)
				out = append(out, [2]int{c, d})
			}
		}
		return out
	}
	sawCopies := 0
	for _, group := range []int{groupG1, groupG2} {
		for _, n := range ns {
			for _, onDev := range []bool{false, true} {
				for _, r := range residents {
					for i, rn := range runs {
						for _, pre := range pres(n) {
							nones := rn.nones(n)
							cp, cw := cMSMWork(group, n, pre[0], pre[1], onDev, nones, rn.pippenger, r[0], r[1])
							gp := makeMSMPlanPre(n, pre[0], pre[1], r[0], r[1])
							gw := msmWorkOf(group, gp, n, onDev, msmSortBytesBound(gp.pairs, gp.keybits), msmOnesThreads(nones, r[0]), rn.pippenger)
							if cp != gp {
								t.Errorf("group %d, n %d, run %d, resident %v, copies %v: plan.go %+v, msm_plan.h %+v", group, n, i, r, pre, gp, cp)
							}
							if cw != gw {
								t.Errorf("group %d, n %d, run %d, on device %v, resident %v, copies %v: work.go %+v, msm_plan.h %+v", group, n, i, onDev, r, pre, gw, cw)
							}
							if gp.depth > 1 {
								sawCopies++
							}
						}
					}
				}
			}
		}
	}
	if sawCopies == 0 {
		t.Error("no plan read precomputed copies")
	}
	for _, n := range append(ns, 0, 1<<27, 1<<30) {
		for _, maxd := range []int{-1, 0, 1, 2, 3, 7, 13, 16, 64, 65} {
			gc, gd := MSMPrecomputeChoice(n, maxd)
			cc, cd := cMSMPrecomputeChoice(n, maxd)
			if gc != cc || gd != cd {
				t.Errorf("precompute choice for %d points, depth <= %d: memplan.go c=%d d=%d, msm_plan.h c=%d d=%d", n, maxd, gc, gd, cc, cd)
			}
			if gd > max(maxd, 1) || gd*int(n) >= 1<<31 && gd > 1 {
				t.Errorf("precompute choice for %d points, depth <= %d: %d copies", n, maxd, gd)
			}
			if g, c := msmPlainBelow(n, gc, gd), cMSMPlainBelow(n, gc, gd); g != c {
				t.Errorf("crossover below %d points over c=%d d=%d: memplan.go %d, msm_plan.h %d", n, gc, gd, g, c)
			}
			for _, group := range []int{groupG1, groupG2} {
				if g, c := MSMBasesBytes(group, n, gd), cMSMBasesBytes(group, n, gd); g != c {
					t.Errorf("bases of %d points, %d copies: memplan.go %d bytes, msm_plan.h %d", n, gd, g, c)
				}
			}
		}
	}
	for _, n := range ns {
		if c, g := cMSMClassifyWork(n), MSMClassifyBytes(n); c != g {
			t.Errorf("classification of %d scalars: memplan.go %d, msm_plan.h %d", n, g, c)
		}
	}
}

// TestCompactSizesMatchHeader checks memplan.go's sizes of a compact W and of
// a constraint system against csrc/groth16.h's, which groth16.cu allocates
// from.
func TestCompactSizesMatchHeader(t *testing.T) {
	for _, n := range []int{1, 63, 64, 65, 1 << 12, 64*1024 + 1, 64*1024*3 - 1, 1 << 22, 1<<26 + 5} {
		if got, want := CompactWords(n), cCompactWords(n); got != want {
			t.Errorf("CompactWords(%d) = %d, the header says %d", n, got, want)
		}
		if got, want := CompactDeviceBytes(n), cCompactDeviceBytes(n); got != want {
			t.Errorf("CompactDeviceBytes(%d) = %d, the header says %d", n, got, want)
		}
	}
	m := &constraints.Matrices{
		NbWires:      4,
		Coefficients: make([]fr.Element, 5),
		A:            constraints.Matrix{Start: []uint32{0, 2, 3}, Wire: []uint32{0, 1, 2}, Coeff: []uint32{1, 1, 2}},
		B:            constraints.Matrix{Start: []uint32{0, 1, 2}, Wire: []uint32{0, 3}, Coeff: []uint32{1, 4}},
		C:            constraints.Matrix{Start: []uint32{0, 0, 1}, Wire: []uint32{3}, Coeff: []uint32{1}},
	}
	if got, want := ConstraintsDeviceBytes(m), cConstraintsDeviceBytes(2, 5, 6); got != want {
		t.Errorf("ConstraintsDeviceBytes = %d, the header says %d", got, want)
	}
}
