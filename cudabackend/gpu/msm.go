package gpu

import (
	"sync"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// MSMTiming is the time one multi-scalar multiplication took. The device
// phases come from CUDA events (device-busy time, summed over chunks; host
// scalars copied in pieces overlap, so the phases then add up to more than
// Device: msm.h's zk_msm_timing says how each is counted); Wall is the
// host's clock around the whole call.
type MSMTiming struct {
	Upload     time.Duration // host scalars to the device (zero for device scalars)
	Sort       time.Duration // signed digits and the radix sort by bucket
	Accumulate time.Duration // bucket accumulation
	Reduce     time.Duration // bucket reduction and window combination
	Device     time.Duration // first event to last
	Wall       time.Duration // the call, as the host saw it
	WindowBits int           // the Pippenger window c chosen (0: no scalar needed Pippenger)
	Chunks     int           // how many chunks the scalars were cut into (pieces of an overlapped upload, or of MAX_CHUNK)
	Ones       time.Duration // split MSMs: summing the points whose scalar is 1
	Pippenger  int           // how many scalars went through Pippenger
	Depth      int           // precomputed copies of the bases read (1: none; 0: no Pippenger)
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

// Bases is resident points of one curve's group, typed by gnark-crypto's
// types for it: A its affine points, J the Jacobian result, S its scalar
// field's elements. The same kernels run every curve (msm.cu instantiates
// them per field); the handle's group tells them which. BN254's groups are
// Bases (UploadBN254G1, UploadBN254G2).
type Bases[A, J, S any] struct {
	msmBases
	name string // the group, as errors name it ("BN254 G1")
	// The sizes of the J and S the points were uploaded for: a Bases
	// converted to other type arguments (same underlying type) is refused,
	// not read or written with the wrong sizes.
	jacBytes, scalarBytes uintptr
}

// BN254G1Bases and BN254G2Bases are BN254's groups.
type (
	BN254G1Bases = Bases[bn254.G1Affine, bn254.G1Jac, bn254fr.Element]
	BN254G2Bases = Bases[bn254.G2Affine, bn254.G2Jac, bn254fr.Element]
)

// ScalarSplit is the classification of a scalar vector W resident on the
// device into 0s, 1s and the rest, for the witness-aware MSM (MSMSplit): the
// 0s are dropped, the points of the 1s are summed by plain point additions,
// and only the rest go through Pippenger. A Groth16 witness is mostly bits
// (hash and range-check wires, booleans), so one classification, shared by
// every MSM over W, saves most of their Pippenger work. It holds two index
// lists on the device (up to 8 bytes per scalar) and reads the rest's
// scalars from W at every MSM: W must stay unchanged until Free.
type ScalarSplit struct {
	mu                 sync.RWMutex
	h                  unsafe.Pointer
	device             int
	n                  int
	zeros, ones, other int
}

// Len returns the number of classified scalars.
func (s *ScalarSplit) Len() int { return s.n }

// Counts returns how many classified scalars are 0, 1, and neither.
func (s *ScalarSplit) Counts() (zeros, ones, other int) { return s.zeros, s.ones, s.other }
