//go:build cuda

package gpu

/*
#include <stdlib.h>
#include "msm.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"
)

// streamedBases is a point set that stays in pinned host memory and goes
// through the device chunk points at a time at every MSM (msm.h's
// zk_msm_run_stream), as a lean key's sets do, without a key around it: the
// tests check the streamed MSM against gnark-crypto with it, and the
// benchmarks time it by chunk and window apart from a proof. Its two chunk
// buffers for points are the resident points of two MSM handles (which also
// give the group, the device and the streams), as groth16.cu's streamer
// keeps them; two device buffers take the chunks' scalars.
type streamedBases struct {
	group C.int
	elem  int // bytes per point
	n     int
	chunk int
	host  unsafe.Pointer // pinned: n points
	h     [2]msmBases    // chunk points each, used as the chunk buffers
	sc    [2]*Buffer     // device: chunk scalars each
}

// newStreamedBases copies the n points at pts (elem bytes each) into pinned
// host memory and allocates the chunk buffers on device dev.
func newStreamedBases(dev int, group C.int, elem int, pts unsafe.Pointer, n, chunk int) (*streamedBases, error) {
	const op = "gpu: streamed bases"
	if n < 1 || chunk < 1 || chunk > n {
		return nil, fmt.Errorf("%s: %d points in chunks of %d: want at least one point and a chunk from 1 to the points: %w", op, n, chunk, ErrInvalid)
	}
	s := &streamedBases{group: group, elem: elem, n: n, chunk: chunk}
	var e errBuf
	if err := check(op, C.zk_msm_host_alloc(C.size_t(n*elem), &s.host, e.ptr(), e.size()), &e); err != nil {
		return nil, err
	}
	copy(unsafe.Slice((*byte)(s.host), n*elem), unsafe.Slice((*byte)(pts), n*elem))
	for i := range s.h {
		if err := upload(&s.h[i], op, dev, group, pts, chunk, nil); err != nil {
			s.free()
			return nil, err
		}
		b, err := Alloc(dev, chunk*FrBytes)
		if err != nil {
			s.free()
			return nil, err
		}
		s.sc[i] = b
	}
	return s, nil
}

// newStreamedG1 is newStreamedBases for G1 points.
func newStreamedG1(dev int, points []bls12381.G1Affine, chunk int) (*streamedBases, error) {
	return newStreamedBases(dev, C.ZK_MSM_G1, g1AffineBytes, unsafe.Pointer(unsafe.SliceData(points)), len(points), chunk)
}

// newStreamedBN254G1 is newStreamedBases for BN254 G1 points (its scalars
// BN254's: classify and runSplit read them as such).
func newStreamedBN254G1(dev int, points []bn254.G1Affine, chunk int) (*streamedBases, error) {
	return newStreamedBases(dev, C.ZK_MSM_BN254_G1, int(unsafe.Sizeof(bn254.G1Affine{})), unsafe.Pointer(unsafe.SliceData(points)), len(points), chunk)
}

// newStreamedG2 is newStreamedBases for G2 points.
func newStreamedG2(dev int, points []bls12381.G2Affine, chunk int) (*streamedBases, error) {
	return newStreamedBases(dev, C.ZK_MSM_G2, g2AffineBytes, unsafe.Pointer(unsafe.SliceData(points)), len(points), chunk)
}

// run computes the MSM of the first len(scalars) points with scalars
// (pinned), windows of at most maxC bits (0: the cheapest), into out (a
// G1Jac or G2Jac as the group says).
func (s *streamedBases) run(scalars *PinnedScalars, maxC int, out unsafe.Pointer) (MSMTiming, error) {
	const op = "gpu: streamed MSM"
	if scalars == nil || scalars.p == nil || scalars.n > s.n {
		return MSMTiming{}, fmt.Errorf("%s: want at most %d pinned scalars: %w", op, s.n, ErrInvalid)
	}
	pbuf := [2]unsafe.Pointer{C.zk_msm_bases(s.h[0].h), C.zk_msm_bases(s.h[1].h)}
	sbuf := [2]unsafe.Pointer{s.sc[0].ptr, s.sc[1].ptr}
	var t C.zk_msm_timing
	var e errBuf
	start := time.Now()
	rc := C.zk_msm_run_stream(s.h[0].h, s.host, scalars.p, C.size_t(scalars.n), &pbuf[0], &sbuf[0],
		C.size_t(s.chunk), C.int(maxC), nil, out, &t, e.ptr(), e.size())
	wall := time.Since(start)
	if err := check(op, rc, &e); err != nil {
		return MSMTiming{}, err
	}
	return timingOf(&t, wall), nil
}

// hostSplit is a streamed run's scalars classified on the host chunk by
// chunk (msm.h's zk_msm_stream_split): the index list in pinned memory, the
// counts in C memory (the C struct that names them may not hold Go
// pointers).
type hostSplit struct {
	idx        unsafe.Pointer // pinned: n uint32
	ones, rest *C.uint32_t    // C memory: a count per chunk
	chunks     int
}

// newHostSplit allocates the classification of n scalars in chunks of
// chunk: the index list pinned, as a lean slot's staging holds it, the
// counts in C memory.
func newHostSplit(n, chunk int) (*hostSplit, error) {
	const op = "gpu: a host split"
	chunks := (n + chunk - 1) / chunk
	h := &hostSplit{chunks: chunks}
	var e errBuf
	if err := check(op, C.zk_msm_host_alloc(C.size_t(max(n, 1)*4), &h.idx, e.ptr(), e.size()), &e); err != nil {
		return nil, err
	}
	h.ones = (*C.uint32_t)(C.calloc(C.size_t(max(chunks, 1)), 4))
	h.rest = (*C.uint32_t)(C.calloc(C.size_t(max(chunks, 1)), 4))
	if h.ones == nil || h.rest == nil {
		return nil, errors.Join(fmt.Errorf("%s: out of host memory for %d chunks' counts", op, chunks), h.free())
	}
	return h, nil
}

// classify classifies scalars (pinned) in chunks of s.chunk with
// zk_msm_classify_chunk, as groth16.cu's lean proofs do while they gather
// them; free releases the result.
func (s *streamedBases) classify(scalars *PinnedScalars) (*hostSplit, error) {
	h, err := newHostSplit(scalars.n, s.chunk)
	if err != nil {
		return nil, err
	}
	if err := s.classifyInto(scalars, h); err != nil {
		return nil, errors.Join(err, h.free())
	}
	return h, nil
}

// classifyInto is classify into a split newHostSplit made for as many
// scalars in chunks of s.chunk.
func (s *streamedBases) classifyInto(scalars *PinnedScalars, h *hostSplit) error {
	const op = "gpu: classify streamed scalars"
	n := scalars.n
	if chunks := (n + s.chunk - 1) / s.chunk; chunks != h.chunks {
		return fmt.Errorf("%s: %d scalars in chunks of %d into a split of %d chunks: %w", op, n, s.chunk, h.chunks, ErrInvalid)
	}
	ones := unsafe.Slice(h.ones, max(h.chunks, 1))
	rest := unsafe.Slice(h.rest, max(h.chunks, 1))
	var e errBuf
	for k := 0; k < h.chunks; k++ {
		lo := k * s.chunk
		cn := min(s.chunk, n-lo)
		rc := C.zk_msm_classify_chunk(s.group, unsafe.Add(scalars.p, lo*FrBytes), C.size_t(cn),
			(*C.uint32_t)(unsafe.Add(h.idx, lo*4)), &ones[k], &rest[k], e.ptr(), e.size())
		if err := check(op, rc, &e); err != nil {
			return err
		}
	}
	return nil
}

// counts returns the split's ones and others, chunk by chunk.
func (h *hostSplit) counts() (ones, rest []uint32) {
	o := unsafe.Slice((*uint32)(unsafe.Pointer(h.ones)), h.chunks)
	r := unsafe.Slice((*uint32)(unsafe.Pointer(h.rest)), h.chunks)
	return append([]uint32(nil), o...), append([]uint32(nil), r...)
}

func (h *hostSplit) free() error {
	C.free(unsafe.Pointer(h.ones))
	C.free(unsafe.Pointer(h.rest))
	h.ones, h.rest = nil, nil
	if h.idx == nil {
		return nil
	}
	var e errBuf
	err := check("gpu: free a host split", C.zk_msm_host_free(h.idx, e.ptr(), e.size()), &e)
	h.idx = nil
	return err
}

// runSplit is run with the scalars classified (zk_msm_run_stream_split).
func (s *streamedBases) runSplit(scalars *PinnedScalars, split *hostSplit, maxC int, out unsafe.Pointer) (MSMTiming, error) {
	const op = "gpu: streamed split MSM"
	if scalars == nil || scalars.p == nil || scalars.n > s.n || split == nil || split.chunks != (scalars.n+s.chunk-1)/s.chunk {
		return MSMTiming{}, fmt.Errorf("%s: want at most %d pinned scalars and their split in chunks of %d: %w", op, s.n, s.chunk, ErrInvalid)
	}
	pbuf := [2]unsafe.Pointer{C.zk_msm_bases(s.h[0].h), C.zk_msm_bases(s.h[1].h)}
	sbuf := [2]unsafe.Pointer{s.sc[0].ptr, s.sc[1].ptr}
	cs := C.zk_msm_stream_split{idx: (*C.uint32_t)(split.idx), ones: split.ones, rest: split.rest}
	var t C.zk_msm_timing
	var e errBuf
	start := time.Now()
	rc := C.zk_msm_run_stream_split(s.h[0].h, s.host, scalars.p, C.size_t(scalars.n), &pbuf[0], &sbuf[0],
		C.size_t(s.chunk), C.int(maxC), &cs, nil, out, &t, e.ptr(), e.size())
	wall := time.Since(start)
	if err := check(op, rc, &e); err != nil {
		return MSMTiming{}, err
	}
	return timingOf(&t, wall), nil
}

// workBytes is the device working memory a run of n scalars allocates
// (zk_msm_stream_work_bytes), beside the chunk buffers.
func (s *streamedBases) workBytes(n, maxC int) (uint64, error) {
	var out C.uint64_t
	var e errBuf
	err := check("gpu: streamed MSM's work", C.zk_msm_stream_work_bytes(s.h[0].h, C.size_t(n), C.size_t(s.chunk), C.int(maxC), &out, e.ptr(), e.size()), &e)
	return uint64(out), err
}

// bufferBytes is the device memory of the chunk buffers.
func (s *streamedBases) bufferBytes() uint64 {
	return 2 * uint64(s.chunk) * uint64(s.elem+FrBytes)
}

// free releases the pinned points and the chunk buffers.
func (s *streamedBases) free() error {
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for i := range s.h {
		if s.h[i].h != nil {
			keep(s.h[i].free("gpu: free streamed bases"))
		}
		if s.sc[i] != nil {
			keep(s.sc[i].Free())
			s.sc[i] = nil
		}
	}
	if s.host != nil {
		var e errBuf
		keep(check("gpu: free streamed bases", C.zk_msm_host_free(s.host, e.ptr(), e.size()), &e))
		s.host = nil
	}
	return first
}
