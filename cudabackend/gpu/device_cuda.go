//go:build cuda

package gpu

/*
#include <stdlib.h>
#include "common.h"
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Available reports whether the package was built with CUDA (it says
// nothing about a device being present; DeviceCount does).
func Available() bool { return true }

// DeviceCount returns the number of visible CUDA devices; an error wrapping
// ErrUnavailable when there is none or no usable driver.
func DeviceCount() (int, error) {
	var e errBuf
	var n C.int
	if err := check("gpu: device count", C.zk_device_count(&n, e.ptr(), e.size()), &e); err != nil {
		return 0, err
	}
	return int(n), nil
}

// DeviceInfo describes device ordinal dev.
func DeviceInfo(dev int) (DeviceProps, error) {
	var e errBuf
	var p C.zk_device_props
	rc := C.zk_device_info(C.int(dev), &p, e.ptr(), e.size())
	if err := check(fmt.Sprintf("gpu: device %d info", dev), rc, &e); err != nil {
		return DeviceProps{}, err
	}
	return DeviceProps{
		Ordinal:        dev,
		Model:          C.GoString(&p.model[0]),
		TotalBytes:     uint64(p.total_bytes),
		FreeBytes:      uint64(p.free_bytes),
		CCMajor:        int(p.cc_major),
		CCMinor:        int(p.cc_minor),
		SMCount:        int(p.sm_count),
		DriverVersion:  int(p.driver_version),
		RuntimeVersion: int(p.runtime_version),
	}, nil
}

// Alloc allocates bytes of device memory on device dev.
func Alloc(dev, bytes int) (*Buffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("gpu: alloc %d bytes: %w", bytes, ErrInvalid)
	}
	var e errBuf
	var p unsafe.Pointer
	rc := C.zk_malloc(C.int(dev), C.size_t(bytes), &p, e.ptr(), e.size())
	if err := check(fmt.Sprintf("gpu: alloc %d bytes on device %d", bytes, dev), rc, &e); err != nil {
		return nil, err
	}
	return &Buffer{device: dev, ptr: p, bytes: bytes}, nil
}

// Free releases the buffer; freeing twice or a nil buffer is a no-op.
func (b *Buffer) Free() error {
	if b == nil || b.ptr == nil {
		return nil
	}
	var e errBuf
	rc := C.zk_free(C.int(b.device), b.ptr, e.ptr(), e.size())
	b.ptr = nil
	return check("gpu: free", rc, &e)
}

// rangeOK checks [off, off+n) against the buffer.
func (b *Buffer) rangeOK(op string, off, n int) error {
	if b == nil || b.ptr == nil {
		return fmt.Errorf("%s: nil or freed buffer: %w", op, ErrInvalid)
	}
	if off < 0 || n < 0 || off+n > b.bytes {
		return fmt.Errorf("%s: bytes [%d, %d) outside a %d-byte buffer: %w", op, off, off+n, b.bytes, ErrInvalid)
	}
	return nil
}

// Upload copies src to the buffer at byte offset off, ordered on stream s
// (nil: synchronous). Go memory is pageable, so CUDA has consumed src when
// Upload returns either way; overlapping uploads with compute needs pinned
// host memory.
func (b *Buffer) Upload(src []byte, off int, s *Stream) error {
	if err := b.rangeOK("gpu: upload", off, len(src)); err != nil || len(src) == 0 {
		return err
	}
	return b.copyIn(unsafe.Pointer(&src[0]), off, len(src), s)
}

// Download copies len(dst) bytes from byte offset off of the buffer into
// dst; it returns when dst holds them.
func (b *Buffer) Download(dst []byte, off int, s *Stream) error {
	if err := b.rangeOK("gpu: download", off, len(dst)); err != nil || len(dst) == 0 {
		return err
	}
	return b.copyOut(unsafe.Pointer(&dst[0]), off, len(dst), s)
}

// UploadFr copies field elements to the buffer at element offset off.
func (b *Buffer) UploadFr(src []fr.Element, off int, s *Stream) error {
	if err := b.rangeOK("gpu: upload", off*FrBytes, len(src)*FrBytes); err != nil || len(src) == 0 {
		return err
	}
	return b.copyIn(unsafe.Pointer(&src[0]), off*FrBytes, len(src)*FrBytes, s)
}

// DownloadFr copies len(dst) field elements from element offset off.
func (b *Buffer) DownloadFr(dst []fr.Element, off int, s *Stream) error {
	if err := b.rangeOK("gpu: download", off*FrBytes, len(dst)*FrBytes); err != nil || len(dst) == 0 {
		return err
	}
	return b.copyOut(unsafe.Pointer(&dst[0]), off*FrBytes, len(dst)*FrBytes, s)
}

// Zero sets n bytes from byte offset off to zero (enqueued on s).
func (b *Buffer) Zero(off, n int, s *Stream) error {
	if err := b.rangeOK("gpu: zero", off, n); err != nil || n == 0 {
		return err
	}
	var e errBuf
	rc := C.zk_memset(C.int(b.device), unsafe.Add(b.ptr, off), 0, C.size_t(n), streamPtr(s), e.ptr(), e.size())
	return check("gpu: zero", rc, &e)
}

func (b *Buffer) copyIn(src unsafe.Pointer, off, n int, s *Stream) error {
	var e errBuf
	rc := C.zk_memcpy(C.int(b.device), unsafe.Add(b.ptr, off), src, C.size_t(n), 1, streamPtr(s), e.ptr(), e.size())
	// CUDA documents that an async copy from pageable memory (all Go
	// memory) returns once src is staged, so src is free to reuse now.
	return check("gpu: upload", rc, &e)
}

func (b *Buffer) copyOut(dst unsafe.Pointer, off, n int, s *Stream) error {
	var e errBuf
	rc := C.zk_memcpy(C.int(b.device), dst, unsafe.Add(b.ptr, off), C.size_t(n), 2, streamPtr(s), e.ptr(), e.size())
	// An async copy to pageable memory returns when the copy is complete.
	return check("gpu: download", rc, &e)
}

// NewStream creates a non-blocking CUDA stream on device dev.
func NewStream(dev int) (*Stream, error) {
	var e errBuf
	var p unsafe.Pointer
	if err := check("gpu: new stream", C.zk_stream_create(C.int(dev), &p, e.ptr(), e.size()), &e); err != nil {
		return nil, err
	}
	return &Stream{device: dev, ptr: p}, nil
}

// Sync waits until all work enqueued on the stream is done.
func (s *Stream) Sync() error {
	var e errBuf
	return check("gpu: stream sync", C.zk_stream_sync(C.int(s.device), s.ptr, e.ptr(), e.size()), &e)
}

// Close destroys the stream (pending work still completes).
func (s *Stream) Close() error {
	if s == nil || s.ptr == nil {
		return nil
	}
	var e errBuf
	rc := C.zk_stream_destroy(C.int(s.device), s.ptr, e.ptr(), e.size())
	s.ptr = nil
	return check("gpu: stream destroy", rc, &e)
}

// NewEvent creates a CUDA timing event on device dev.
func NewEvent(dev int) (*Event, error) {
	var e errBuf
	var p unsafe.Pointer
	if err := check("gpu: new event", C.zk_event_create(C.int(dev), &p, e.ptr(), e.size()), &e); err != nil {
		return nil, err
	}
	return &Event{device: dev, ptr: p}, nil
}

// Record enqueues the event on s (nil: the legacy default stream).
func (ev *Event) Record(s *Stream) error {
	var e errBuf
	return check("gpu: event record", C.zk_event_record(C.int(ev.device), ev.ptr, streamPtr(s), e.ptr(), e.size()), &e)
}

// Elapsed waits for end and returns the device time from start to end.
func Elapsed(start, end *Event) (time.Duration, error) {
	var e errBuf
	var ms C.float
	if err := check("gpu: event elapsed", C.zk_event_elapsed(C.int(end.device), start.ptr, end.ptr, &ms, e.ptr(), e.size()), &e); err != nil {
		return 0, err
	}
	return msDuration(ms), nil
}

// Close destroys the event.
func (ev *Event) Close() error {
	if ev == nil || ev.ptr == nil {
		return nil
	}
	var e errBuf
	rc := C.zk_event_destroy(C.int(ev.device), ev.ptr, e.ptr(), e.size())
	ev.ptr = nil
	return check("gpu: event destroy", rc, &e)
}
