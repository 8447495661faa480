//go:build cuda

package gpu

/*
#include "msm.h"
#include "groth16.h"
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// ClassifyScalars classifies elements [off, off+n) of buf (fr.Element layout,
// Montgomery form) into 0s, 1s and the rest on stream s (nil: the legacy
// default stream), and returns when the counts are known. The elements must
// stay unchanged until the split is freed: split MSMs read them.
func ClassifyScalars(buf *Buffer, off, n int, s *Stream) (*ScalarSplit, error) {
	const op = "gpu: classify scalars"
	if buf == nil || buf.ptr == nil {
		return nil, fmt.Errorf("%s: nil scalar buffer: %w", op, ErrInvalid)
	}
	if off < 0 || n < 0 || (off+n)*FrBytes > buf.bytes {
		return nil, fmt.Errorf("%s: elements [%d, %d) outside a buffer of %d bytes: %w", op, off, off+n, buf.bytes, ErrInvalid)
	}
	if s != nil && s.device != buf.device {
		return nil, fmt.Errorf("%s: stream on device %d, scalars on device %d: %w", op, s.device, buf.device, ErrInvalid)
	}
	var e errBuf
	var h *C.zk_msm_split
	rc := C.zk_msm_split_classify(C.int(buf.device), unsafe.Add(buf.ptr, off*FrBytes), C.size_t(n), streamPtr(s), &h, e.ptr(), e.size())
	if err := check(op, rc, &e); err != nil {
		return nil, err
	}
	var zeros, ones, other C.size_t
	C.zk_msm_split_counts(h, &zeros, &ones, &other)
	return &ScalarSplit{h: unsafe.Pointer(h), device: buf.device, n: n, zeros: int(zeros), ones: int(ones), other: int(other)}, nil
}

// Free releases the split's device memory; split MSMs on it fail afterwards.
// It waits for running ones. A second Free is a no-op.
func (s *ScalarSplit) Free() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return nil
	}
	var e errBuf
	err := check("gpu: free scalar split", C.zk_msm_split_free((*C.zk_msm_split)(s.h), e.ptr(), e.size()), &e)
	s.h = nil
	return err
}

// runSplit computes the split MSM of classified scalars [lo, lo+n) into out.
func (b *msmBases) runSplit(op string, sp *ScalarSplit, lo, n int, s *Stream, out unsafe.Pointer) (MSMTiming, error) {
	if b == nil {
		return MSMTiming{}, fmt.Errorf("%s: nil bases: %w", op, ErrInvalid)
	}
	if sp == nil {
		return MSMTiming{}, fmt.Errorf("%s: nil scalar split: %w", op, ErrInvalid)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	switch {
	case b.h == nil:
		return MSMTiming{}, fmt.Errorf("%s: bases were freed: %w", op, ErrInvalid)
	case sp.h == nil:
		return MSMTiming{}, fmt.Errorf("%s: scalar split was freed: %w", op, ErrInvalid)
	case n < 0 || n > b.n:
		return MSMTiming{}, fmt.Errorf("%s: %d scalars for %d resident points: %w", op, n, b.n, ErrInvalid)
	case lo < 0 || lo+n > sp.n:
		return MSMTiming{}, fmt.Errorf("%s: scalars [%d, %d) outside the %d classified: %w", op, lo, lo+n, sp.n, ErrInvalid)
	case sp.device != b.device:
		return MSMTiming{}, fmt.Errorf("%s: scalars on device %d, points on device %d: %w", op, sp.device, b.device, ErrInvalid)
	case s != nil && s.device != b.device:
		return MSMTiming{}, fmt.Errorf("%s: stream on device %d, points on device %d: %w", op, s.device, b.device, ErrInvalid)
	}
	var t C.zk_msm_timing
	var e errBuf
	start := time.Now()
	rc := C.zk_msm_run_split(b.h, (*C.zk_msm_split)(sp.h), C.size_t(lo), C.size_t(n), streamPtr(s), out, &t, e.ptr(), e.size())
	wall := time.Since(start)
	if err := check(op, rc, &e); err != nil {
		return MSMTiming{}, err
	}
	return timingOf(&t, wall), nil
}

// MSMSplit returns sum W[lo+i]*bases[i] for i < n over the classified
// scalars W of sp: the 0s are dropped, the points of the 1s summed, the rest
// go through Pippenger. On stream s (nil: the bases' own stream); it returns
// when the result is back. The classes are BLS12-381's scalars': another
// curve's bases refuse a split (msm.cu).
func (b *Bases[A, J, S]) MSMSplit(sp *ScalarSplit, lo, n int, s *Stream) (J, MSMTiming, error) {
	var res J
	if b == nil {
		return res, MSMTiming{}, fmt.Errorf("gpu: split MSM: nil bases: %w", ErrInvalid)
	}
	t, err := b.runSplit("gpu: "+b.name+" split MSM", sp, lo, n, s, unsafe.Pointer(&res))
	return res, t, err
}
