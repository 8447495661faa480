//go:build !cuda

package gpu

import (
	"fmt"
	"time"
)

// errNoCUDABuild is what the default build answers for devices and NTTs.
var errNoCUDABuild = fmt.Errorf("%w: built without CUDA (build with -tags cuda after make cuda-lib)", ErrUnavailable)

// Available reports whether the package was built with CUDA (it says
// nothing about a device being present; DeviceCount does).
func Available() bool { return false }

// DeviceCount returns the number of visible CUDA devices; without CUDA an
// error wrapping ErrUnavailable.
func DeviceCount() (int, error) { return 0, errNoCUDABuild }

// DeviceInfo describes device ordinal dev; without CUDA an error wrapping
// ErrUnavailable.
func DeviceInfo(dev int) (DeviceProps, error) { return DeviceProps{}, errNoCUDABuild }

// Alloc allocates device memory; without CUDA an error wrapping
// ErrUnavailable.
func Alloc(dev, bytes int) (*Buffer, error) { return nil, errNoCUDABuild }

// Free releases the buffer; a no-op without CUDA.
func (b *Buffer) Free() error { return nil }

// Upload copies host bytes to the buffer; without CUDA an error.
func (b *Buffer) Upload(src []byte, off int, s *Stream) error { return errNoCUDABuild }

// Download copies buffer bytes to the host; without CUDA an error.
func (b *Buffer) Download(dst []byte, off int, s *Stream) error { return errNoCUDABuild }

// Zero clears bytes of the buffer; without CUDA an error.
func (b *Buffer) Zero(off, n int, s *Stream) error { return errNoCUDABuild }

// NewStream creates a CUDA stream; without CUDA an error.
func NewStream(dev int) (*Stream, error) { return nil, errNoCUDABuild }

// Sync waits for the stream; without CUDA an error.
func (s *Stream) Sync() error { return errNoCUDABuild }

// Close destroys the stream; a no-op without CUDA.
func (s *Stream) Close() error { return nil }

// NewEvent creates a CUDA event; without CUDA an error.
func NewEvent(dev int) (*Event, error) { return nil, errNoCUDABuild }

// Record enqueues the event; without CUDA an error.
func (ev *Event) Record(s *Stream) error { return errNoCUDABuild }

// Elapsed returns the device time between two events; without CUDA an
// error.
func Elapsed(start, end *Event) (time.Duration, error) { return 0, errNoCUDABuild }

// Close destroys the event; a no-op without CUDA.
func (ev *Event) Close() error { return nil }
