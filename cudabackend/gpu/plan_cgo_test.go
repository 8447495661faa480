//go:build cgo

package gpu

import "testing"

// TestMSMWorkMatchesPlanHeader checks that memplan.go (the admission estimate)
// computes what csrc/msm_plan.h (the sizes msm.cu allocates) computes, field by
// field, for sizes from one scalar to beyond a chunk, both groups, scalars on
// the host or the device, several device sizes, the window of one chunk or of
// a longer MSM (the overlapped upload's pieces), and split runs (their ones'
// buffers, with or without Pippenger work).
func TestMSMWorkMatchesPlanHeader(t *testing.T) {
	ns := []uint64{1, 2, 100, 4095, 1 << 12, 1<<16 + 1, 1 << 20, 1<<22 + 3, 1 << 24, 1<<24 + 7, 1 << 25, 1<<26 + 5}
	residents := [][2]uint32{{1, 1}, {128, 128}, {132 * 256, 132 * 512}, {132 * 2048, 132 * 2048}, {16 * 2048, 8 * 2048}}
	type run struct {
		cfor      func(n uint64) uint64
		nones     func(n uint64) uint64
		pippenger bool
	}
	runs := []run{
		{func(uint64) uint64 { return 0 }, func(uint64) uint64 { return 0 }, true},         // dense
		{func(n uint64) uint64 { return 8 * n }, func(uint64) uint64 { return 0 }, true},   // a piece of 8
		{func(uint64) uint64 { return 0 }, func(n uint64) uint64 { return n }, true},       // split
		{func(uint64) uint64 { return 0 }, func(n uint64) uint64 { return 3*n + 1 }, true}, // split, more ones than rest
		{func(uint64) uint64 { return 0 }, func(n uint64) uint64 { return n }, false},      // split, only 0s and 1s
	}
	for _, group := range []int{groupG1, groupG2} {
		for _, n := range ns {
			for _, onDev := range []bool{false, true} {
				for _, r := range residents {
					for i, rn := range runs {
						cfor, nones := rn.cfor(n), rn.nones(n)
						cp, cw := cMSMWork(group, n, cfor, onDev, nones, rn.pippenger, r[0], r[1])
						gp := makeMSMPlan(n, cfor, r[0], r[1])
						gw := msmWorkOf(group, gp, n, onDev, msmSortBytesBound(gp.pairs, gp.keybits), msmOnesThreads(nones, r[0]), rn.pippenger)
						if cp != gp {
							t.Errorf("group %d, n %d, run %d, resident %v: plan.go %+v, msm_plan.h %+v", group, n, i, r, gp, cp)
						}
						if cw != gw {
							t.Errorf("group %d, n %d, run %d, on device %v, resident %v: work.go %+v, msm_plan.h %+v", group, n, i, onDev, r, gw, cw)
						}
					}
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
