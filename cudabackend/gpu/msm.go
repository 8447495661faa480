package gpu

import (
	"sync"
	"time"
	"unsafe"
)

// MSMTiming is the time one multi-scalar multiplication took. The device
// phases come from CUDA events on the MSM's stream (device-busy time, summed
// over chunks); Wall is the host's clock around the whole call.
type MSMTiming struct {
	Upload     time.Duration // host scalars to the device (zero for device scalars)
	Sort       time.Duration // signed digits and the radix sort by bucket
	Accumulate time.Duration // bucket accumulation
	Reduce     time.Duration // bucket reduction and window combination
	Device     time.Duration // first event to last
	Wall       time.Duration // the call, as the host saw it
	WindowBits int           // the Pippenger window c chosen
	Chunks     int           // how many pieces the scalars were cut into
}

// msmBases is a point set resident on one GPU, behind an opaque handle of
// msm.cu. The lock keeps Free from releasing the points under a running MSM.
type msmBases struct {
	mu     sync.RWMutex
	h      unsafe.Pointer
	n      int
	device int
}

// Len returns the number of resident points (infinity points included).
func (b *msmBases) Len() int { return b.n }

// Device returns the ordinal of the device the points live on.
func (b *msmBases) Device() int { return b.device }

// G1Bases is a set of BLS12-381 G1 points resident on one GPU, from UploadG1
// or UploadG1Masked, against which MSMs run without moving the points again.
type G1Bases struct{ msmBases }

// G2Bases is the G2 counterpart of G1Bases (UploadG2, UploadG2Masked).
type G2Bases struct{ msmBases }
