//go:build cuda

package gpu

/*
#include "msm.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// The ABI's byte sizes must be gnark-crypto's: msm.cu reinterprets Go slices.
const (
	g1AffineBytes = 96
	g2AffineBytes = 192
)

var (
	_ [g1AffineBytes - unsafe.Sizeof(bls12381.G1Affine{})]struct{}
	_ [unsafe.Sizeof(bls12381.G1Affine{}) - g1AffineBytes]struct{}
	_ [g2AffineBytes - unsafe.Sizeof(bls12381.G2Affine{})]struct{}
	_ [unsafe.Sizeof(bls12381.G2Affine{}) - g2AffineBytes]struct{}
	_ [144 - unsafe.Sizeof(bls12381.G1Jac{})]struct{}
	_ [288 - unsafe.Sizeof(bls12381.G2Jac{})]struct{}
)

// UploadG1 copies points (gnark affine, infinity as (0, 0)) to device dev
// and keeps them there until Free. MSMs then run against the first n of them
// for n scalars.
func UploadG1(dev int, points []bls12381.G1Affine) (*G1Bases, error) {
	return uploadBases[bls12381.G1Affine, bls12381.G1Jac, fr.Element](dev, C.ZK_MSM_G1, "G1", points, nil)
}

// UploadG1Masked uploads len(skip) points: entry i is infinity where skip[i]
// and otherwise the next of points, in order. It expands a gnark proving
// key's pk.G1.A or pk.G1.B (which leave out the points InfinityA / InfinityB
// mark) to one point per wire, so the MSM runs on the unfiltered wire
// vector. The count of false entries of skip must be len(points).
func UploadG1Masked(dev int, points []bls12381.G1Affine, skip []bool) (*G1Bases, error) {
	return uploadBases[bls12381.G1Affine, bls12381.G1Jac, fr.Element](dev, C.ZK_MSM_G1, "G1", points, skip)
}

// UploadG2 is UploadG1 for G2 points.
func UploadG2(dev int, points []bls12381.G2Affine) (*G2Bases, error) {
	return uploadBases[bls12381.G2Affine, bls12381.G2Jac, fr.Element](dev, C.ZK_MSM_G2, "G2", points, nil)
}

// UploadG2Masked is UploadG1Masked for G2 points (gnark's pk.G2.B).
func UploadG2Masked(dev int, points []bls12381.G2Affine, skip []bool) (*G2Bases, error) {
	return uploadBases[bls12381.G2Affine, bls12381.G2Jac, fr.Element](dev, C.ZK_MSM_G2, "G2", points, skip)
}

// uploadBases uploads points of group (with skip's mask when not nil) as the
// Bases of their types.
func uploadBases[A, J, S any](dev int, group C.int, name string, points []A, skip []bool) (*Bases[A, J, S], error) {
	op := "gpu: upload " + name + " bases"
	if skip != nil {
		op = "gpu: upload masked " + name + " bases"
	}
	b := &Bases[A, J, S]{name: name}
	if err := upload(&b.msmBases, op, dev, group, unsafe.Pointer(unsafe.SliceData(points)), len(points), skip); err != nil {
		return nil, err
	}
	runtime.KeepAlive(points)
	return b, nil
}

func upload(b *msmBases, op string, dev int, group C.int, pts unsafe.Pointer, n int, skip []bool) error {
	if dev < 0 {
		return fmt.Errorf("%s: device %d: %w", op, dev, ErrInvalid)
	}
	var skipPtr *C.uint8_t
	nskip := 0
	if skip != nil {
		keep := 0
		for _, s := range skip {
			if !s {
				keep++
			}
		}
		if keep != n {
			return fmt.Errorf("%s: the mask keeps %d of %d entries but %d points were given: %w", op, keep, len(skip), n, ErrInvalid)
		}
		nskip = len(skip)
		if nskip > 0 {
			// A Go bool is one byte, 0 or 1.
			skipPtr = (*C.uint8_t)(unsafe.Pointer(&skip[0]))
		}
	}
	var e errBuf
	var h unsafe.Pointer
	rc := C.zk_msm_upload_on(C.int(dev), group, pts, C.size_t(n), skipPtr, C.size_t(nskip), &h, e.ptr(), e.size())
	runtime.KeepAlive(skip)
	if err := check(op, rc, &e); err != nil {
		return err
	}
	b.h = h
	b.device = dev
	b.n = int(C.zk_msm_len(h))
	return nil
}

// free releases the handle once; later calls are no-ops.
func (b *msmBases) free(op string) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.h == nil {
		return nil
	}
	var e errBuf
	err := check(op, C.zk_msm_free(b.h, e.ptr(), e.size()), &e)
	b.h = nil
	return err
}

// run computes the MSM of the n scalars at ptr (host or device memory) into
// out, the Go Jacobian point the C side writes.
func (b *msmBases) run(op string, ptr unsafe.Pointer, n int, onDevice bool, s *Stream, out unsafe.Pointer) (MSMTiming, error) {
	if b == nil {
		return MSMTiming{}, fmt.Errorf("%s: nil bases: %w", op, ErrInvalid)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return MSMTiming{}, fmt.Errorf("%s: bases were freed: %w", op, ErrInvalid)
	}
	if n < 0 || n > b.n {
		return MSMTiming{}, fmt.Errorf("%s: %d scalars for %d resident points: %w", op, n, b.n, ErrInvalid)
	}
	if s != nil && s.device != b.device {
		return MSMTiming{}, fmt.Errorf("%s: stream on device %d, points on device %d: %w", op, s.device, b.device, ErrInvalid)
	}
	dev := C.int(0)
	if onDevice {
		dev = 1
	}
	var t C.zk_msm_timing
	var e errBuf
	start := time.Now()
	rc := C.zk_msm_run(b.h, ptr, C.size_t(n), dev, streamPtr(s), out, &t, e.ptr(), e.size())
	wall := time.Since(start)
	if err := check(op, rc, &e); err != nil {
		return MSMTiming{}, err
	}
	return timingOf(&t, wall), nil
}

// timingOf converts the C side's timing of one MSM.
func timingOf(t *C.zk_msm_timing, wall time.Duration) MSMTiming {
	return MSMTiming{
		Upload:     msDuration(t.upload_ms),
		Sort:       msDuration(t.sort_ms),
		Accumulate: msDuration(t.accum_ms),
		Reduce:     msDuration(t.reduce_ms),
		Device:     msDuration(t.total_ms),
		Wall:       wall,
		WindowBits: int(t.window_bits),
		Chunks:     int(t.chunks),
		Ones:       msDuration(t.ones_ms),
		Pippenger:  int(t.pippenger_n),
		Depth:      int(t.depth),
	}
}

// deviceScalars checks that elements [off, off+n) lie in buf on the bases'
// device and returns their address.
func (b *msmBases) deviceScalars(op string, buf *Buffer, off, n int) (unsafe.Pointer, error) {
	if buf == nil || buf.ptr == nil {
		return nil, fmt.Errorf("%s: nil scalar buffer: %w", op, ErrInvalid)
	}
	if buf.device != b.device {
		return nil, fmt.Errorf("%s: scalars on device %d, points on device %d: %w", op, buf.device, b.device, ErrInvalid)
	}
	if off < 0 || n < 0 || (off+n)*FrBytes > buf.bytes {
		return nil, fmt.Errorf("%s: elements [%d, %d) outside a buffer of %d bytes: %w", op, off, off+n, buf.bytes, ErrInvalid)
	}
	return unsafe.Add(buf.ptr, off*FrBytes), nil
}

// MSM returns sum scalars[i]*bases[i] over the first len(scalars) resident
// points. The scalars are copied from the host on the bases' own stream;
// the call returns when the result is back.
func (b *Bases[A, J, S]) MSM(scalars []S) (J, MSMTiming, error) {
	var res J
	if b == nil {
		return res, MSMTiming{}, fmt.Errorf("gpu: MSM: nil bases: %w", ErrInvalid)
	}
	t, err := b.run("gpu: "+b.name+" MSM", unsafe.Pointer(unsafe.SliceData(scalars)), len(scalars), false, nil, unsafe.Pointer(&res))
	runtime.KeepAlive(scalars)
	return res, t, err
}

// MSMDevice is MSM with the scalars already on the device: elements
// [off, off+n) of buf (fr.Element layout, Montgomery form), read on stream s
// (nil: the bases' own stream), so a pipeline can pass its resident W or H.
func (b *Bases[A, J, S]) MSMDevice(scalars *Buffer, off, n int, s *Stream) (J, MSMTiming, error) {
	var res J
	if b == nil {
		return res, MSMTiming{}, fmt.Errorf("gpu: MSM: nil bases: %w", ErrInvalid)
	}
	op := "gpu: " + b.name + " MSM"
	p, err := b.deviceScalars(op, scalars, off, n)
	if err != nil {
		return res, MSMTiming{}, err
	}
	t, err := b.run(op, p, n, true, s, unsafe.Pointer(&res))
	return res, t, err
}

// Free releases the device memory; MSMs on the bases fail afterwards. It
// waits for a running MSM to finish.
func (b *Bases[A, J, S]) Free() error {
	if b == nil {
		return nil
	}
	return b.free("gpu: free " + b.name + " bases")
}

// precompute keeps up to maxDepth copies of the points (msm.h's
// zk_msm_precompute); 1 returns to the points alone.
func (b *msmBases) precompute(op string, maxDepth int) error {
	if b == nil {
		return fmt.Errorf("%s: nil bases: %w", op, ErrInvalid)
	}
	if maxDepth < 1 || maxDepth > MSMMaxDepth {
		return fmt.Errorf("%s: depth %d outside [1, %d]: %w", op, maxDepth, MSMMaxDepth, ErrInvalid)
	}
	b.mu.Lock() // no MSM runs while the points are replaced
	defer b.mu.Unlock()
	if b.h == nil {
		return fmt.Errorf("%s: bases were freed: %w", op, ErrInvalid)
	}
	var e errBuf
	return check(op, C.zk_msm_precompute(b.h, C.int(maxDepth), e.ptr(), e.size()), &e)
}

// precomputed returns the copies' window (0: none) and count (1: none).
func (b *msmBases) precomputed() (c, depth int) {
	if b == nil {
		return 0, 1
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	var cc, cd C.int
	C.zk_msm_precomputed(b.h, &cc, &cd)
	return int(cc), int(cd)
}

// Precompute keeps up to maxDepth copies of the points on the device, copy g
// being P·2^(c·G·g) for the window c and copies d <= maxDepth that
// MSMPrecomputeChoice picks for Len() points (G = ceil(windows/d)): an MSM
// then reduces G bucket sets instead of one per window, so its window can
// grow. The points take d times their memory (MSMBasesBytes); maxDepth 1
// returns to the points alone. The copies are computed on the device from
// the resident points; MSMs wait for it.
func (b *Bases[A, J, S]) Precompute(maxDepth int) error {
	if b == nil {
		return fmt.Errorf("gpu: precompute bases: nil bases: %w", ErrInvalid)
	}
	return b.precompute("gpu: precompute "+b.name+" bases", maxDepth)
}

// Precomputed returns the window the copies were made for (0: none) and
// their count (1: the points alone).
func (b *Bases[A, J, S]) Precomputed() (c, depth int) {
	if b == nil {
		return 0, 1
	}
	return b.precomputed()
}

// PinnedScalars is a scalar vector in pinned (page-locked) host memory,
// which the device copies at full bus speed (Go memory is pageable: the
// driver stages it). For callers, and benchmarks, that keep their scalars
// in it; Free releases it.
type PinnedScalars struct {
	p unsafe.Pointer
	n int
}

// NewPinnedScalars allocates n scalars of pinned host memory.
func NewPinnedScalars(n int) (*PinnedScalars, error) {
	if n < 0 {
		return nil, fmt.Errorf("gpu: pinned scalars: %d elements: %w", n, ErrInvalid)
	}
	var e errBuf
	var p unsafe.Pointer
	if err := check("gpu: pinned scalars", C.zk_msm_host_alloc(C.size_t(n*FrBytes), &p, e.ptr(), e.size()), &e); err != nil {
		return nil, err
	}
	return &PinnedScalars{p: p, n: n}, nil
}

// Elements returns the scalars as a slice over the pinned memory (nil after
// Free).
func (s *PinnedScalars) Elements() []fr.Element {
	if s == nil || s.p == nil {
		return nil
	}
	return unsafe.Slice((*fr.Element)(s.p), s.n)
}

// Free releases the memory; the slice Elements returned must not be used
// after.
func (s *PinnedScalars) Free() error {
	if s == nil || s.p == nil {
		return nil
	}
	var e errBuf
	err := check("gpu: free pinned scalars", C.zk_msm_host_free(s.p, e.ptr(), e.size()), &e)
	s.p = nil
	return err
}

// msmWindowBits returns the window size the C side picks for n scalars.
func msmWindowBits(g2 bool, n int) int {
	group := C.int(C.ZK_MSM_G1)
	if g2 {
		group = C.ZK_MSM_G2
	}
	return int(C.zk_msm_window_bits(group, C.size_t(n)))
}

// SetPieces sets how many pieces this set's MSMs of host scalars copy them
// in (G1's by default; G2's too while pieces > 0 is set): each piece's work
// starts when it has arrived, beside the next piece's copy, each piece is
// sorted while the one before is accumulated, and the pieces share one set of
// buckets. A piece keeps at least minPiece scalars. pieces 0 returns to the
// default count (4, G1 only) and minPiece 0 to the default least (2^23). For
// with/without comparisons and tests; later MSMs on these bases follow it.
func (b *msmBases) SetPieces(pieces, minPiece int) error {
	const op = "gpu: set an MSM's pieces"
	if pieces < 0 || pieces > 64 || minPiece < 0 {
		return fmt.Errorf("%s: %d pieces of at least %d scalars: want 0 (the default) to 64 pieces and a least of 0 (the default) or more: %w", op, pieces, minPiece, ErrInvalid)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return fmt.Errorf("%s: bases were freed: %w", op, ErrInvalid)
	}
	C.zk_msm_set_pieces(b.h, C.int(pieces), C.size_t(minPiece))
	return nil
}

// TrimMSMPool returns the MSM pool's memory not in use on device dev to the
// device (the pool otherwise keeps what MSMs freed, for the next ones).
// Synchronizes the device.
func TrimMSMPool(dev int) error {
	var e errBuf
	return check("gpu: trim the MSM pool", C.zk_msm_trim(C.int(dev), e.ptr(), e.size()), &e)
}

// DeviceResidency asks device dev how many threads of the MSM's
// accumulation and reduction kernels it keeps at once, for every group (G1
// and G2 of each curve): with it MSMWorkBytes is what msm.cu allocates on
// that device.
func DeviceResidency(dev int) (Residency, error) {
	var r Residency
	for g, group := range []C.int{C.ZK_MSM_G1, C.ZK_MSM_G2, C.ZK_MSM_BN254_G1, C.ZK_MSM_BN254_G2} {
		var acc, red C.uint32_t
		var e errBuf
		if err := check("gpu: MSM residency", C.zk_msm_residency(C.int(dev), group, &acc, &red, e.ptr(), e.size()), &e); err != nil {
			return Residency{}, err
		}
		r.Accum[g], r.Reduce[g] = uint32(acc), uint32(red)
	}
	return r, nil
}
