//go:build cuda

package gpu

// The link line for every cgo file of the package: the kernels
// (build/cuda/libzkcuda.a, from `make cuda-lib`) and the static CUDA
// runtime. Where libcudart_static.a is elsewhere, add its folder with
// CGO_LDFLAGS=-L<dir> (cudabackend/cuda.mk does so from CUDA_LIBDIR).

/*
#cgo CFLAGS: -I${SRCDIR}/../csrc
#cgo LDFLAGS: ${SRCDIR}/../../build/cuda/libzkcuda.a -L/usr/lib/x86_64-linux-gnu -lcudart_static -ldl -lrt -lpthread -lstdc++ -lm
#include "common.h"
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// errBuf receives the message of a failed C call (every function of the C
// ABI takes one; the message lives in the caller's buffer, not in
// thread-local state, so goroutines need not pin their OS thread).
type errBuf [512]C.char

func (e *errBuf) ptr() *C.char   { return &e[0] }
func (e *errBuf) size() C.size_t { return C.size_t(len(e)) }

// check turns a C return code and its message into a Go error wrapping one
// of the package's sentinels; nil for ZK_OK. The codes are common.h's, which
// msm.h shares.
func check(op string, rc C.int, e *errBuf) error {
	if rc == C.ZK_OK {
		return nil
	}
	msg := C.GoString(e.ptr())
	var kind error
	switch rc {
	case C.ZK_EINVAL:
		kind = ErrInvalid
	case C.ZK_ENOMEM:
		kind = ErrOutOfMemory
	case C.ZK_ENODEV:
		kind = ErrUnavailable
	case C.ZK_EUNSAT:
		kind = ErrUnsatisfied
	default:
		kind = ErrCUDA
	}
	return fmt.Errorf("%s: %s: %w", op, msg, kind)
}

// msDuration converts CUDA event milliseconds to a Duration.
func msDuration(ms C.float) time.Duration {
	return time.Duration(float64(ms) * float64(time.Millisecond))
}

// streamPtr is the cudaStream_t of s (nil: legacy default stream).
func streamPtr(s *Stream) unsafe.Pointer {
	if s == nil {
		return nil
	}
	return s.ptr
}
