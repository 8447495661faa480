package gpu

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/zkhost/zkhost/cudabackend/csrc"
	"github.com/zkhost/zkhost/sdk"
)

// Errors every function of the package wraps; test them with errors.Is.
var (
	// ErrUnavailable means no GPU can be used: the package was built
	// without CUDA, there is no GPU or driver, or the driver is older than
	// the CUDA runtime linked in. It is the SDK's sdk.ErrUnavailable, one value
	// for the idea from the driver to the host's client API.
	ErrUnavailable error = sdk.ErrUnavailable
	// ErrInvalid means a bad argument (size out of range, nil buffer).
	ErrInvalid = errors.New("gpu: invalid argument")
	// ErrOutOfMemory means device memory could not be allocated.
	ErrOutOfMemory = errors.New("gpu: out of device memory")
	// ErrCUDA means a CUDA call failed (launch failure, faulted context).
	ErrCUDA = errors.New("gpu: cuda error")
	// ErrUnsatisfied means a compact partition's witness does not satisfy
	// one of its constraints, which the device checks (ProveCompact); the
	// error is an *UnsatisfiedError naming the constraint.
	ErrUnsatisfied = errors.New("gpu: constraint not satisfied")
)

// Decimation is the order convention of an NTT, numbered as gnark-crypto's
// fft.Decimation: DIT reads bit-reversed input and writes natural order,
// DIF reads natural order and writes bit-reversed order.
type Decimation int

// The decimations.
const (
	DIT Decimation = 0
	DIF Decimation = 1
)

// Direction selects the forward transform (gnark's Domain.FFT) or the
// inverse (Domain.FFTInverse, scaled by 1/N).
type Direction int

// The directions.
const (
	Forward Direction = 0
	Inverse Direction = 1
)

// NTTRadix is how an NTT pass runs its stages in shared memory; every radix
// gives the same result bit for bit (for with/without comparisons).
type NTTRadix int

// The radixes: the default (radix 4), one stage per step, two stages per
// step (its own kernel).
const (
	NTTRadixDefault NTTRadix = 0
	NTTRadix2       NTTRadix = 2
	NTTRadix4       NTTRadix = 4
)

// check returns an error wrapping ErrInvalid unless r is one of the radixes.
func (r NTTRadix) check(op string) error {
	if r != NTTRadixDefault && r != NTTRadix2 && r != NTTRadix4 {
		return fmt.Errorf("%s: NTT radix %d: want 2, 4 or 0 (the default, 4): %w", op, r, ErrInvalid)
	}
	return nil
}

// MaxLogN is the largest NTT size supported, as log2 of the element count.
const MaxLogN = 28

// FrBytes is the size of one scalar-field element (fr.Element) on the
// device and in Go.
const FrBytes = 32

// DeviceProps describes one CUDA device.
type DeviceProps struct {
	Ordinal        int
	Model          string // e.g. "NVIDIA H200"
	TotalBytes     uint64 // device memory
	FreeBytes      uint64 // free device memory when asked
	CCMajor        int    // compute capability, e.g. 9.0
	CCMinor        int
	SMCount        int // multiprocessors
	DriverVersion  int // CUDA version the driver supports, e.g. 13000
	RuntimeVersion int // CUDA runtime linked in, e.g. 11080
}

// HTiming holds the device-busy time of one H computation's phases,
// measured with CUDA events on its stream.
type HTiming struct {
	Upload    time.Duration // A, B from the host (host variant only)
	INTT      time.Duration // C = A∘B and the three inverse NTTs
	CosetNTT  time.Duration // the three forward NTTs on the coset
	Pointwise time.Duration // (A·B - C) / (g^N - 1)
	CosetINTT time.Duration // the final inverse NTT on the coset
	Download  time.Duration // H to the host (host variant only)
	Total     time.Duration // first event to last
}

// Buffer is device memory from Alloc, owned by the caller until Free.
type Buffer struct {
	device int
	ptr    unsafe.Pointer
	bytes  int
}

// Device returns the ordinal of the device the buffer lives on.
func (b *Buffer) Device() int { return b.device }

// Len returns the buffer's size in bytes.
func (b *Buffer) Len() int { return b.bytes }

// Ptr returns the device address, for other cgo code (not dereferenceable
// from Go).
func (b *Buffer) Ptr() unsafe.Pointer { return b.ptr }

// Stream is a CUDA stream (non-blocking) from NewStream.
type Stream struct {
	device int
	ptr    unsafe.Pointer
}

// Device returns the ordinal of the stream's device.
func (s *Stream) Device() int { return s.device }

// Ptr returns the cudaStream_t, for other cgo code; nil is the legacy
// default stream.
func (s *Stream) Ptr() unsafe.Pointer {
	if s == nil {
		return nil
	}
	return s.ptr
}

// Event is a CUDA timing event from NewEvent.
type Event struct {
	device int
	ptr    unsafe.Pointer
}

// DomainBytes returns the device memory the cached tables of one NTT size
// (2^logN) take: twiddles for both directions and the coset tables.
func DomainBytes(logN int) uint64 {
	if logN < 0 || logN > MaxLogN {
		return 0
	}
	return csrc.DomainBytes(uint32(logN))
}

// ComputeHBytes returns the device memory ComputeH needs for 2^logN
// constraints beside the cached tables: A, B and C, N elements each.
func ComputeHBytes(logN int) uint64 {
	if logN < 0 || logN > MaxLogN {
		return 0
	}
	return 3 * (uint64(1) << logN) * FrBytes
}

// logNOf returns log2(n) when n is a power of two in [1, 2^MaxLogN].
func logNOf(n int) (int, bool) {
	if n <= 0 || n&(n-1) != 0 {
		return 0, false
	}
	l := 0
	for 1<<l < n {
		l++
	}
	return l, l <= MaxLogN
}
