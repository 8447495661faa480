//go:build cgo

package gpu

import "testing"

// TestMSMWorkMatchesPlanHeader checks that memplan.go (the admission estimate)
// computes what csrc/msm_plan.h (the sizes msm.cu allocates) computes, field by
// field, for sizes from one scalar to beyond a chunk, both groups, scalars on
// the host or the device, and several device sizes.
func TestMSMWorkMatchesPlanHeader(t *testing.T) {
	ns := []uint64{1, 2, 100, 4095, 1 << 12, 1<<16 + 1, 1 << 20, 1<<22 + 3, 1 << 24, 1<<24 + 7, 1 << 25, 1<<26 + 5}
	residents := [][2]uint32{{1, 1}, {128, 128}, {132 * 256, 132 * 512}, {132 * 2048, 132 * 2048}, {16 * 2048, 8 * 2048}}
	for _, group := range []int{groupG1, groupG2} {
		for _, n := range ns {
			for _, onDev := range []bool{false, true} {
				for _, r := range residents {
					cp, cw := cMSMWork(group, n, onDev, r[0], r[1])
					gp := makeMSMPlan(n, r[0], r[1])
					gw := msmWorkOf(group, gp, n, onDev, msmSortBytesBound(gp.pairs, gp.keybits))
					if cp != gp {
						t.Errorf("group %d, n %d, resident %v: plan.go %+v, msm_plan.h %+v", group, n, r, gp, cp)
					}
					if cw != gw {
						t.Errorf("group %d, n %d, on device %v, resident %v: work.go %+v, msm_plan.h %+v", group, n, onDev, r, gw, cw)
					}
				}
			}
		}
	}
}
