//go:build cuda

package gpu

/*
#include "ntt.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/zkhost/zkhost/sdk/keyfile"
)

// The ABI's element size must be gnark-crypto's for both fields: ntt.cu
// reinterprets Go slices.
var (
	_ [FrBytes - unsafe.Sizeof(fr.Element{})]struct{}
	_ [unsafe.Sizeof(fr.Element{}) - FrBytes]struct{}
	_ [FrBytes - unsafe.Sizeof(bn254fr.Element{})]struct{}
	_ [unsafe.Sizeof(bn254fr.Element{}) - FrBytes]struct{}
)

// nttCurve is ntt.h's zk_ntt_curve of E's field, and the op names of its
// errors: BLS12-381's as they always were ("gpu: ntt"), BN254's named
// ("gpu: BN254 ntt"), as the MSM's groups are.
func nttCurve[E Fr](op string) (C.int, string) {
	var z E
	if _, ok := any(z).(bn254fr.Element); ok {
		return C.ZK_NTT_BN254, "gpu: BN254 " + op
	}
	return C.ZK_NTT_BLS12_381, "gpu: " + op
}

func checkLogN(op string, logN int) error {
	if logN < 0 || logN > MaxLogN {
		return fmt.Errorf("%s: logN %d outside [0, %d]: %w", op, logN, MaxLogN, ErrInvalid)
	}
	return nil
}

func checkNTTMode(op string, dir Direction, dec Decimation) error {
	if dir != Forward && dir != Inverse {
		return fmt.Errorf("%s: direction %d: %w", op, dir, ErrInvalid)
	}
	if dec != DIT && dec != DIF {
		return fmt.Errorf("%s: decimation %d: %w", op, dec, ErrInvalid)
	}
	return nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// PrepareNTT builds and caches the twiddle and coset tables of size 2^logN
// of E's field on device dev (DomainBytes(logN) of device memory). Optional:
// transforms prepare their size on first use.
func PrepareNTT[E Fr](dev, logN int) error {
	curve, op := nttCurve[E]("prepare ntt")
	if err := checkLogN(op, logN); err != nil {
		return err
	}
	var e errBuf
	return check(op, C.zk_ntt_prepare_curve(curve, C.int(dev), C.uint32_t(logN), e.ptr(), e.size()), &e)
}

// ReleaseNTT frees every cached NTT table of device dev, of every field. No
// transform of that device may be in flight.
func ReleaseNTT(dev int) error {
	var e errBuf
	return check("gpu: release ntt", C.zk_ntt_release(C.int(dev), e.ptr(), e.size()), &e)
}

// NTT transforms a in place on device dev, exactly as gnark-crypto's
// fft.NewDomain(len(a)).FFT(a, dec) (dir Forward) or FFTInverse(a, dec)
// (dir Inverse) of a's curve (BLS12-381's fr/fft or BN254's) would, with
// fft.OnCoset() when coset is set, its passes in radix radix. len(a) must be
// a power of two up to 2^MaxLogN. The data travels to the device and back.
func NTT[E Fr](dev int, a []E, dir Direction, dec Decimation, coset bool, radix NTTRadix) error {
	curve, op := nttCurve[E]("ntt")
	logN, ok := logNOf(len(a))
	if !ok {
		return fmt.Errorf("%s: length %d is not a power of two in [1, 2^%d]: %w", op, len(a), MaxLogN, ErrInvalid)
	}
	if err := checkNTTMode(op, dir, dec); err != nil {
		return err
	}
	if err := radix.check(op); err != nil {
		return err
	}
	var e errBuf
	rc := C.zk_ntt_host_curve(curve, C.int(dev), unsafe.Pointer(&a[0]), C.uint32_t(logN), C.int(dir), C.int(dec), cbool(coset), C.int(radix), e.ptr(), e.size())
	return check(op, rc, &e)
}

// NTTDevice enqueues the transform of NTT on 2^logN elements of E's field
// resident in buf, on stream s (nil: the legacy default stream); it does not
// wait. The buffer holds no type: E names the field (NTTDevice[fr.Element]
// for BLS12-381's, NTTDevice[bn254fr.Element] for BN254's).
func NTTDevice[E Fr](buf *Buffer, logN int, dir Direction, dec Decimation, coset bool, radix NTTRadix, s *Stream) error {
	curve, op := nttCurve[E]("ntt (device)")
	if err := checkLogN(op, logN); err != nil {
		return err
	}
	if err := checkNTTMode(op, dir, dec); err != nil {
		return err
	}
	if err := radix.check(op); err != nil {
		return err
	}
	if err := buf.rangeOK(op, 0, (1<<logN)*FrBytes); err != nil {
		return err
	}
	var e errBuf
	rc := C.zk_ntt_device_curve(curve, C.int(buf.device), buf.ptr, C.uint32_t(logN), C.int(dir), C.int(dec), cbool(coset), C.int(radix), streamPtr(s), e.ptr(), e.size())
	return check(op, rc, &e)
}

// ComputeH computes Groth16's quotient on device 0 exactly as gnark v0.14.0's
// computeH(a, b, c, domain) does for a domain of 2^logN points and
// c = a∘b: the result has 2^logN elements, bit-reversed (h[:N-1] pairs with
// pk.G1.Z). a and b hold at most 2^logN values each (zero-padded); they
// are not modified.
func ComputeH(a, b []fr.Element, logN int) ([]fr.Element, error) {
	h, _, err := ComputeHOn(0, a, b, logN)
	return h, err
}

// ComputeHOn is ComputeH on device dev, also returning the phases' device
// time. It allocates ComputeHBytes(logN) of device memory for the call. Its
// NTTs run in the default radix (a Groth16 key's proofs take theirs from its
// ProveOptions).
func ComputeHOn(dev int, a, b []fr.Element, logN int) ([]fr.Element, HTiming, error) {
	return ComputeHForm(dev, a, b, logN, keyfile.HFormGnark)
}

// ComputeHForm is ComputeHOn over E's field (BLS12-381's or BN254's), in the
// form a key's H points want (keyfile.HForm): gnark's, or snarkjs's (ntt.h's
// zk_compute_h_device_curve: A·B − C on snarkjs's odd coset, natural order,
// refprover.ComputeHSnarkjs's result).
func ComputeHForm[E Fr](dev int, a, b []E, logN int, form keyfile.HForm) ([]E, HTiming, error) {
	c, op := nttCurve[E]("compute h")
	var cform C.int
	switch form {
	case keyfile.HFormGnark:
		cform = C.ZK_H_GNARK
	case keyfile.HFormSnarkjs:
		cform = C.ZK_H_SNARKJS
		op += " in snarkjs's form"
	default:
		return nil, HTiming{}, fmt.Errorf("%s: H form %d: %w", op, form, ErrInvalid)
	}
	return computeHHost(op, a, b, logN, func(a, b, h unsafe.Pointer, n int, t *C.zk_h_timing, e *errBuf) C.int {
		return C.zk_compute_h_host_curve(c, cform, C.int(dev), a, b, C.uint64_t(n), h, C.uint32_t(logN), C.int(NTTRadixDefault), t, e.ptr(), e.size())
	})
}

// ComputeHStreamOn is ComputeHOn computed out of core (ntt.h's zk_h_stream,
// what a key whose proofs stream runs): A, B and C stay in pinned host
// memory and pass through the device in blocks of block elements
// (HStreamMinBlock(logN) to 2^logN, a power of two). The same result bit for
// bit.
func ComputeHStreamOn(dev int, a, b []fr.Element, logN int, block uint64) ([]fr.Element, HTiming, error) {
	return computeHHost("gpu: compute h out of core", a, b, logN, func(a, b, h unsafe.Pointer, n int, t *C.zk_h_timing, e *errBuf) C.int {
		return C.zk_compute_h_stream_host(C.int(dev), a, b, C.uint64_t(n), h, C.uint32_t(logN), C.uint64_t(block), t, e.ptr(), e.size())
	})
}

// computeHHost checks H's host inputs (a and b of equal length, 1 to 2^logN
// values) and has call compute H of their n values into h (2^logN elements).
func computeHHost[E Fr](op string, a, b []E, logN int, call func(a, b, h unsafe.Pointer, n int, t *C.zk_h_timing, e *errBuf) C.int) ([]E, HTiming, error) {
	if err := checkLogN(op, logN); err != nil {
		return nil, HTiming{}, err
	}
	n := 1 << logN
	if len(a) != len(b) {
		return nil, HTiming{}, fmt.Errorf("%s: len(a) %d != len(b) %d: %w", op, len(a), len(b), ErrInvalid)
	}
	if len(a) == 0 || len(a) > n {
		return nil, HTiming{}, fmt.Errorf("%s: %d inputs for a domain of %d: %w", op, len(a), n, ErrInvalid)
	}
	h := make([]E, n)
	var e errBuf
	var t C.zk_h_timing
	if err := check(op, call(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&h[0]), len(a), &t, &e), &e); err != nil {
		return nil, HTiming{}, err
	}
	return h, hTiming(&t), nil
}

// ComputeHDevice enqueues ComputeH on resident data, on stream s: a and b
// hold A and B (2^logN elements each, zero-padded by the caller), c is
// 2^logN elements of scratch. H replaces A in a; b and c are clobbered.
// Without timing it returns at once; with timing it waits for the work and
// returns the phases' device time from CUDA events. Its NTTs run in the
// default radix.
func ComputeHDevice(a, b, c *Buffer, logN int, s *Stream, timing bool) (HTiming, error) {
	const op = "gpu: compute h (device)"
	if err := checkLogN(op, logN); err != nil {
		return HTiming{}, err
	}
	size := (1 << logN) * FrBytes
	for _, buf := range []*Buffer{a, b, c} {
		if err := buf.rangeOK(op, 0, size); err != nil {
			return HTiming{}, err
		}
	}
	if a.device != b.device || a.device != c.device {
		return HTiming{}, fmt.Errorf("%s: buffers on devices %d, %d, %d: %w", op, a.device, b.device, c.device, ErrInvalid)
	}
	var e errBuf
	var t C.zk_h_timing
	tp := &t
	if !timing {
		tp = nil
	}
	rc := C.zk_compute_h_device(C.int(a.device), a.ptr, b.ptr, c.ptr, C.uint32_t(logN), C.int(NTTRadixDefault), streamPtr(s), tp, e.ptr(), e.size())
	if err := check(op, rc, &e); err != nil {
		return HTiming{}, err
	}
	if !timing {
		return HTiming{}, nil
	}
	return hTiming(&t), nil
}

func hTiming(t *C.zk_h_timing) HTiming {
	return HTiming{
		Upload:    msDuration(t.upload_ms),
		INTT:      msDuration(t.intt_ms),
		CosetNTT:  msDuration(t.coset_ntt_ms),
		Pointwise: msDuration(t.pointwise_ms),
		CosetINTT: msDuration(t.coset_intt_ms),
		Download:  msDuration(t.download_ms),
		Total:     msDuration(t.total_ms),
	}
}

// domainBytesC is the C library's DomainBytes, for the test that keeps
// the Go formula honest.
func domainBytesC(logN int) uint64 { return uint64(C.zk_ntt_domain_bytes(C.uint32_t(logN))) }

// fieldOp runs zk_field_op (a test hook): field 0 is fr (32-byte
// elements), 1 is fq (48 bytes); a, b and out hold n elements each.
func fieldOp(dev, field, op int, a, b, out unsafe.Pointer, n int) error {
	var e errBuf
	rc := C.zk_field_op(C.int(dev), C.int(field), C.int(op), a, b, out, C.uint64_t(n), e.ptr(), e.size())
	return check("gpu: field op", rc, &e)
}
