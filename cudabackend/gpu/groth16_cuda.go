//go:build cuda

package gpu

/*
#include <stdlib.h>
#include "groth16.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Groth16Key is a proving key on one GPU, on BLS12-381 or BN254: its point
// sets resident, or streamed from pinned host memory (LoadGroth16Key's
// chunk). Its methods with gnark-crypto types are BLS12-381's; ProveCurve,
// StageCurve and StageWithCurve take either curve's.
type Groth16Key struct {
	ptr    *C.zk_g16_key
	info   KeyInfo
	curve  ecc.ID
	nwires int // for the slots' staging views
	domain int
	pk     any // the *keyfile.ProvingKey: a streamed key reads its points from there
}

func ptrOf[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func boolBytes(b []bool) *C.uint8_t {
	if len(b) == 0 {
		return nil
	}
	// A Go bool is one byte, 0 or 1.
	return (*C.uint8_t)(unsafe.Pointer(&b[0]))
}

// LoadGroth16Key uploads pk's point sets (BLS12-381 or BN254) to device dev;
// with chunk > 0 it streams them instead (see KeyInfo.Chunk): pk's point
// slices (a key file's mapping) must then stay mapped until Free. A resident
// key keeps no precomputed copies (LoadGroth16KeyPlan gives them); its proofs
// run with the default ProveOptions. Its proofs compute H in pk's form
// (keyfile.HForm: gnark's, or snarkjs's for a key imported from a .zkey).
func LoadGroth16Key[G1, G2 any](dev int, pk *keyfile.ProvingKey[G1, G2], chunk uint64) (*Groth16Key, error) {
	return LoadGroth16KeyPlan(dev, pk, DevicePlan{Chunk: chunk, Depth: 1}, ProveOptions{})
}

// LoadGroth16KeyPlan loads pk as plan (PlanDevice) says: streamed in
// plan.Chunk points (its proofs too when plan.Lean: H in blocks of
// plan.HBlock; BLS12-381 keys in gnark's H form only), or resident with up
// to plan.Depth precomputed copies of each point set (KeyCopiesOf; 0 or 1:
// none), which every proof's MSMs read; its proofs run as opts says.
func LoadGroth16KeyPlan[G1, G2 any](dev int, pk *keyfile.ProvingKey[G1, G2], plan DevicePlan, opts ProveOptions) (*Groth16Key, error) {
	depth := max(plan.Depth, 1)
	if depth < 1 || depth > MSMMaxDepth {
		return nil, fmt.Errorf("gpu: load key: %d precomputed copies, at most %d: %w", depth, MSMMaxDepth, ErrInvalid)
	}
	if err := opts.check("gpu: load key"); err != nil {
		return nil, err
	}
	if pk.DomainSize == 0 || pk.DomainSize&(pk.DomainSize-1) != 0 {
		return nil, fmt.Errorf("gpu: domain size %d is not a power of two: %w", pk.DomainSize, ErrInvalid)
	}
	id := curve.IDOf[G1]()
	_, _, ccurve, err := groupsOf(id)
	if err != nil {
		return nil, fmt.Errorf("gpu: load key: %w", err)
	}
	var form C.int
	switch pk.HForm {
	case keyfile.HFormGnark:
		form = C.ZK_H_GNARK
	case keyfile.HFormSnarkjs:
		form = C.ZK_H_SNARKJS
	default:
		return nil, fmt.Errorf("gpu: load key: H form %d: %w", pk.HForm, ErrInvalid)
	}
	logN := bits.TrailingZeros64(pk.DomainSize)
	var e errBuf
	var k *C.zk_g16_key
	rc := C.zk_g16_key_load(C.int(dev), C.int(ccurve), form, C.uint32_t(logN), C.size_t(pk.NbWires), C.size_t(pk.NbPublic),
		ptrOf(pk.G1A), C.size_t(len(pk.G1A)), boolBytes(pk.InfinityA),
		ptrOf(pk.G1B), C.size_t(len(pk.G1B)), boolBytes(pk.InfinityB),
		ptrOf(pk.G1K), C.size_t(len(pk.G1K)), ptrOf(pk.G1Z), C.size_t(len(pk.G1Z)),
		ptrOf(pk.G2B), C.size_t(plan.Chunk), C.int(depth), C.uint64_t(plan.HBlock), C.int(plan.StreamC), &k, e.ptr(), e.size())
	runtime.KeepAlive(pk)
	if err := check("gpu: load key", rc, &e); err != nil {
		return nil, err
	}
	key := &Groth16Key{ptr: k, info: keyInfo(k), curve: id, nwires: int(pk.NbWires), domain: int(pk.DomainSize), pk: pk}
	if err := key.SetOptions(opts); err != nil {
		return nil, errors.Join(err, key.Free())
	}
	return key, nil
}

// SetOptions sets how the key's later proofs run (a proof reads them once,
// when it starts); an option out of range is refused and the key keeps its
// options.
func (k *Groth16Key) SetOptions(opts ProveOptions) error {
	const op = "gpu: set a key's options"
	if err := opts.check(op); err != nil {
		return err
	}
	co := C.zk_g16_options{binary_split: cbool(!opts.DenseMSM), ntt_radix: C.int(opts.NTTRadix), lean_split: cbool(opts.LeanSplit)}
	var e errBuf
	return check(op, C.zk_g16_key_set_options(k.ptr, &co, e.ptr(), e.size()), &e)
}

// keyInfo reads a loaded key's description from C.
func keyInfo(k *C.zk_g16_key) KeyInfo {
	var ci C.zk_g16_key_info_t
	C.zk_g16_key_info(k, &ci)
	info := KeyInfo{
		DeviceBytes: uint64(ci.device_bytes), Chunk: uint64(ci.chunk),
		WorkG1: uint64(ci.work_g1), WorkG2: uint64(ci.work_g2),
		PinnedCopyBytes: uint64(ci.pinned_copy_bytes), Registered: int(ci.registered),
		Constraints: int(ci.constraints), ConstraintBytes: uint64(ci.constraint_bytes),
		HBlock: uint64(ci.h_block), StreamC: int(ci.stream_c),
	}
	for i := range info.Partials {
		info.Partials[i] = int(ci.partials[i])
		info.Copies[i] = SetCopies{C: int(ci.copies_c[i]), D: int(ci.copies[i])}
	}
	return info
}

func u32Ptr(s []uint32) *C.uint32_t { return (*C.uint32_t)(ptrOf(s)) }

// SetConstraints uploads the circuit's constraint matrices beside the key,
// resident until Free and counted in its DeviceBytes (ConstraintsDeviceBytes
// says how much before), so that it proves compact partitions (ProveCompact):
// the device then evaluates A, B and C itself and checks every constraint.
// m is checked (m.Check) and must be over the key's wires, with at most its
// domain's constraints; a key takes one constraint system, once. Streamed keys
// take them too. Not while proofs on k run.
func (k *Groth16Key) SetConstraints(m *constraints.Matrices) error {
	if k == nil || k.ptr == nil || m == nil {
		return fmt.Errorf("gpu: set constraints: nil or freed key, or nil matrices: %w", ErrInvalid)
	}
	if err := m.Check(); err != nil {
		return fmt.Errorf("gpu: set constraints: %w: %w", ErrInvalid, err)
	}
	if m.NbWires != uint64(k.nwires) {
		return fmt.Errorf("gpu: set constraints: %d wires, the key has %d: %w", m.NbWires, k.nwires, ErrInvalid)
	}
	var e errBuf
	rc := C.zk_g16_key_set_constraints(k.ptr, C.size_t(m.NbWires), C.size_t(m.NbConstraints()),
		C.size_t(len(m.Coefficients)), ptrOf(m.Coefficients),
		u32Ptr(m.A.Start), u32Ptr(m.A.Wire), u32Ptr(m.A.Coeff), C.size_t(m.A.Terms()),
		u32Ptr(m.B.Start), u32Ptr(m.B.Wire), u32Ptr(m.B.Coeff), C.size_t(m.B.Terms()),
		u32Ptr(m.C.Start), u32Ptr(m.C.Wire), u32Ptr(m.C.Coeff), C.size_t(m.C.Terms()),
		e.ptr(), e.size())
	runtime.KeepAlive(m)
	if err := check("gpu: set constraints", rc, &e); err != nil {
		return err
	}
	k.info = keyInfo(k.ptr)
	return nil
}

// Curve is the key's curve.
func (k *Groth16Key) Curve() ecc.ID { return k.curve }

// HasConstraints reports whether the key holds a constraint system
// (SetConstraints), and so proves compact partitions.
func (k *Groth16Key) HasConstraints() bool { return k != nil && k.info.Constraints > 0 }

// DeviceBytes is the device memory the key holds.
func (k *Groth16Key) DeviceBytes() uint64 { return k.info.DeviceBytes }

// Info describes the loaded key.
func (k *Groth16Key) Info() KeyInfo { return k.info }

// Free releases the key's device memory. Not while proofs on it run.
func (k *Groth16Key) Free() error {
	if k == nil || k.ptr == nil {
		return nil
	}
	var e errBuf
	err := check("gpu: free key", C.zk_g16_key_free(k.ptr, e.ptr(), e.size()), &e)
	k.ptr = nil
	return err
}

// Groth16Slot is what one proof in flight on a key needs, allocated once
// (NewSlot) and reused by every proof: device buffers, streams, events and a
// pinned staging buffer the partition is read (StageWith) or copied (Stage)
// into. One proof per slot at a time; proofs in different slots run at once.
type Groth16Slot struct {
	ptr            *C.zk_g16_slot
	curve          ecc.ID
	w, a, b        unsafe.Pointer // the pinned staging of W, A and B: C memory
	nwires, domain int
	deviceBytes    uint64
	hostBytes      uint64
}

// staging is the whole pinned staging: W then A then B, or a compact W.
func (s *Groth16Slot) staging() (unsafe.Pointer, int) {
	return s.w, (s.nwires + 2*s.domain) * FrBytes
}

// views returns the staging as W, A and B of S, the key's scalars, or an
// error wrapping ErrInvalid when S is another curve's.
func stagingViews[S any](s *Groth16Slot) (w, a, b []S, err error) {
	if s == nil || s.ptr == nil {
		return nil, nil, nil, fmt.Errorf("gpu: stage: nil or freed slot: %w", ErrInvalid)
	}
	if id := curve.ScalarIDOf[S](); id != s.curve {
		return nil, nil, nil, fmt.Errorf("gpu: stage %s scalars into a slot of a %s key: %w", curve.Title(id), curve.Title(s.curve), ErrInvalid)
	}
	return unsafe.Slice((*S)(s.w), s.nwires), unsafe.Slice((*S)(s.a), s.domain), unsafe.Slice((*S)(s.b), s.domain), nil
}

// NewSlot allocates a slot for proofs on k.
func (k *Groth16Key) NewSlot() (*Groth16Slot, error) {
	var s Groth16Slot
	var w, a, b unsafe.Pointer
	var dev, host C.uint64_t
	var e errBuf
	if err := check("gpu: new slot", C.zk_g16_slot_create(k.ptr, &s.ptr, &w, &a, &b, &dev, &host, e.ptr(), e.size()), &e); err != nil {
		return nil, err
	}
	s.curve, s.w, s.a, s.b, s.nwires, s.domain = k.curve, w, a, b, k.nwires, k.domain
	s.deviceBytes, s.hostBytes = uint64(dev), uint64(host)
	return &s, nil
}

// DeviceBytes is the device memory the slot holds.
func (s *Groth16Slot) DeviceBytes() uint64 { return s.deviceBytes }

// HostBytes is the pinned host memory the slot holds.
func (s *Groth16Slot) HostBytes() uint64 { return s.hostBytes }

// Free releases the slot. Not while a proof runs in it.
func (s *Groth16Slot) Free() error {
	if s == nil || s.ptr == nil {
		return nil
	}
	var e errBuf
	err := check("gpu: free slot", C.zk_g16_slot_free(s.ptr, e.ptr(), e.size()), &e)
	s.ptr, s.w, s.a, s.b = nil, nil, nil, nil
	return err
}

// Stage copies a BLS12-381 partition into the slot's pinned staging: StageCurve.
func (s *Groth16Slot) Stage(w, a, b []fr.Element, threads int) error {
	return StageCurve(s, w, a, b, threads)
}

// StageWith has fill write a BLS12-381 partition into the slot's staging:
// StageWithCurve.
func (s *Groth16Slot) StageWith(nbWires, nbConstraints int, fill func(w, a, b []fr.Element) error) error {
	return StageWithCurve(s, nbWires, nbConstraints, fill)
}

// StageCurve copies a partition (w: the key's wires; a, b: up to its domain;
// S the key's curve's fr.Element) into the slot's pinned staging with up to
// threads goroutines. It runs on the CPU only, so it overlaps whatever the
// GPU computes for other slots; the upload from there is then a DMA at the
// bus's full speed.
func StageCurve[S any](s *Groth16Slot, w, a, b []S, threads int) error {
	if len(a) != len(b) {
		return fmt.Errorf("gpu: stage %d A and %d B values: %w", len(a), len(b), ErrInvalid)
	}
	return StageWithCurve(s, len(w), len(a), func(sw, sa, sb []S) error {
		parallelCopy(sw, w, threads)
		parallelCopy(sa, a, threads)
		parallelCopy(sb, b, threads)
		return nil
	})
}

// StageWithCurve has fill write a partition of nbWires wires and
// nbConstraints constraints straight into the slot's pinned staging (w, a and
// b sized to it, of S, the key's curve's fr.Element; the CUDA backend reads
// the partition file there with sdk.ReadPartition) and returns fill's error.
// Like StageCurve, CPU only.
func StageWithCurve[S any](s *Groth16Slot, nbWires, nbConstraints int, fill func(w, a, b []S) error) error {
	w, a, b, err := stagingViews[S](s)
	if err != nil {
		return err
	}
	if nbWires != len(w) || nbConstraints <= 0 || nbConstraints > len(a) {
		return fmt.Errorf("gpu: stage %d wires and %d constraints into a slot for %d wires and up to %d constraints: %w",
			nbWires, nbConstraints, len(w), len(a), ErrInvalid)
	}
	return fill(w, a[:nbConstraints], b[:nbConstraints])
}

// CompactCapacity is the most values (wires neither 0 nor 1) a compact W
// staged in s may have: what its staging holds after the two bitmaps, and
// what the device's A, B and C buffers hold, where they wait to be expanded.
func (s *Groth16Slot) CompactCapacity() int {
	if s == nil || s.ptr == nil {
		return 0
	}
	_, bytes := s.staging()
	return min(s.nwires, 3*s.domain, (bytes-16*CompactWords(s.nwires))/FrBytes)
}

// StageCompactWith has fill write a compact W of a BLS12-381 key's
// partition into the slot's staging: StageCompactWithCurve.
func (s *Groth16Slot) StageCompactWith(nbWires, nbOther int, fill func(other, bits []uint64, values []fr.Element) error) error {
	return StageCompactWithCurve(s, nbWires, nbOther, fill)
}

// StageCompactWithCurve has fill write a compact W of nbWires wires (the
// key's) and nbOther values straight into the slot's pinned staging: other
// and bits, bitmaps of CompactWords(nbWires) words each (wire i is bit i%64
// of word i/64), and values, the nbOther wires whose other bit is set, in
// wire order (S, the key's curve's fr.Element, Montgomery form). Wire i is
// then values[rank(i)] where other's bit i is set (rank(i): other's set bits
// below i), else 1 (the curve's) where bits' bit i is set, else 0. fill must
// set every word of both bitmaps (the staging holds whatever the last
// partition left). Refused (ErrInvalid) before fill is called: scalars of
// another curve than the key's, other wires than the key's, or more values
// than CompactCapacity. Returns fill's error. Like Stage, CPU only;
// ProveCompactCurve proves it.
func StageCompactWithCurve[S any](s *Groth16Slot, nbWires, nbOther int, fill func(other, bits []uint64, values []S) error) error {
	if s == nil || s.ptr == nil {
		return fmt.Errorf("gpu: stage compact: nil or freed slot: %w", ErrInvalid)
	}
	if id := curve.ScalarIDOf[S](); id != s.curve {
		return fmt.Errorf("gpu: stage a compact W of %s scalars into a slot of a %s key: %w", curve.Title(id), curve.Title(s.curve), ErrInvalid)
	}
	if nbWires != s.nwires || nbOther < 0 || nbOther > s.CompactCapacity() {
		return fmt.Errorf("gpu: stage a compact W of %d wires and %d values into a slot for %d wires and up to %d values: %w",
			nbWires, nbOther, s.nwires, s.CompactCapacity(), ErrInvalid)
	}
	base, _ := s.staging()
	words := CompactWords(nbWires)
	other := unsafe.Slice((*uint64)(base), words)
	bits := unsafe.Slice((*uint64)(unsafe.Add(base, 8*words)), words)
	values := unsafe.Slice((*S)(unsafe.Add(base, 16*words)), nbOther)
	return fill(other, bits, values)
}

// sumOf adds MSM sums of one group (an MSM over chunks is the sum of the
// chunks' MSMs) with add, from infinity. An empty sum comes back all zero
// from C, which is no point (gnark's Jacobian infinity is (1, 1, 0)): skipped.
func sumOf[J any](parts []J, infinity J, add func(p, q *J)) J {
	acc := infinity
	for i := range parts {
		if allZero(unsafe.Slice((*byte)(unsafe.Pointer(&parts[i])), unsafe.Sizeof(parts[i]))) {
			continue
		}
		add(&acc, &parts[i])
	}
	return acc
}

// allZero reports whether every byte of b is zero.
func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// stageChunk is how many elements one goroutine copies at a time (4 MiB).
const stageChunk = 1 << 17

// parallelCopy copies src into dst (len(dst) >= len(src)) in stageChunk pieces
// spread over up to threads goroutines: one core's memcpy is well below the
// memory bandwidth that a few reach.
func parallelCopy[S any](dst, src []S, threads int) {
	chunks := (len(src) + stageChunk - 1) / stageChunk
	threads = max(1, min(threads, chunks))
	var wg sync.WaitGroup
	for t := range threads {
		wg.Go(func() {
			for c := t; c < chunks; c += threads {
				lo, hi := c*stageChunk, min(len(src), (c+1)*stageChunk)
				copy(dst[lo:hi], src[lo:hi])
			}
		})
	}
	wg.Wait()
}

// Prove is ProveCurve for a BLS12-381 key.
func (k *Groth16Key) Prove(s *Groth16Slot, n int) (refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac], Groth16Timing, error) {
	return ProveCurve(curve.BLS12381{}, k, s, n)
}

// ProveCurve runs one proof's device work on the partition staged in s (n
// constraints) for k, a key on the curve c binds: upload W, A, B, compute H
// (in the key's form), the four G1 MSMs and the G2 MSM. The host assembles
// the proof from the sums. When it returns, s may be staged again.
func ProveCurve[S, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], k *Groth16Key, s *Groth16Slot, n int) (refprover.MSMResults[G1J, G2J], Groth16Timing, error) {
	return prove(c, k, s, "gpu: prove", func(g1, g2 unsafe.Pointer, t *C.zk_g16_timing, e *errBuf) C.int {
		return C.zk_g16_prove(k.ptr, s.ptr, C.size_t(n), g1, g2, t, e.ptr(), e.size())
	})
}

// ProveCompact is Prove for a compact partition staged in s
// (StageCompactWith, nbOther values) of nbConstraints constraints, which must
// be the key's constraint system's (SetConstraints; a key without one
// refuses, ErrInvalid): the device expands W, evaluates A, B and C from the
// matrices and checks every constraint, then proves as Prove does. A witness
// that fails a constraint gives an *UnsatisfiedError (errors.Is
// ErrUnsatisfied) naming the first, as constraints.Eval does; a
// compact W whose other bitmap marks other than nbOther wires, ErrInvalid.
func (k *Groth16Key) ProveCompact(s *Groth16Slot, nbConstraints, nbOther int) (refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac], Groth16Timing, error) {
	return ProveCompactCurve(curve.BLS12381{}, k, s, nbConstraints, nbOther)
}

// ProveCompactCurve is ProveCompact for a key on the curve c binds, either
// curve's (the device expands and evaluates over the key's field): the CUDA
// backend's generic path calls it.
func ProveCompactCurve[S, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], k *Groth16Key, s *Groth16Slot, nbConstraints, nbOther int) (refprover.MSMResults[G1J, G2J], Groth16Timing, error) {
	if nbConstraints <= 0 || nbOther < 0 {
		return refprover.MSMResults[G1J, G2J]{}, Groth16Timing{}, fmt.Errorf("gpu: prove compact: %d constraints, %d values: %w", nbConstraints, nbOther, ErrInvalid)
	}
	var bad C.int64_t = -1
	res, t, err := prove(c, k, s, "gpu: prove compact", func(g1, g2 unsafe.Pointer, t *C.zk_g16_timing, e *errBuf) C.int {
		return C.zk_g16_prove_compact(k.ptr, s.ptr, C.size_t(nbConstraints), C.size_t(nbOther), g1, g2, t, &bad, e.ptr(), e.size())
	})
	if errors.Is(err, ErrUnsatisfied) {
		return res, t, &UnsatisfiedError{Constraint: int(bad), msg: err.Error()}
	}
	return res, t, err
}

// evalCompact is the test hook zk_g16_eval_compact: the first half of
// ProveCompact, then the device's W, A, B and C (the domain's length, zero
// past n; S the key's curve's fr.Element) and the first unsatisfied
// constraint (-1: none).
func evalCompact[S any](k *Groth16Key, s *Groth16Slot, n, nbOther int) (w, a, b, c []S, bad int, err error) {
	if k == nil || k.ptr == nil || s == nil || s.ptr == nil || n <= 0 || nbOther < 0 || curve.ScalarIDOf[S]() != k.curve {
		return nil, nil, nil, nil, -1, fmt.Errorf("gpu: eval compact: bad arguments: %w", ErrInvalid)
	}
	w = make([]S, k.nwires)
	a = make([]S, k.domain)
	b = make([]S, k.domain)
	c = make([]S, k.domain)
	var cbad C.int64_t
	var e errBuf
	rc := C.zk_g16_eval_compact(k.ptr, s.ptr, C.size_t(n), C.size_t(nbOther), ptrOf(w), ptrOf(a), ptrOf(b), ptrOf(c), &cbad, e.ptr(), e.size())
	if err := check("gpu: eval compact", rc, &e); err != nil {
		return nil, nil, nil, nil, -1, err
	}
	return w, a, b, c, int(cbad), nil
}

// prove runs one proof through call (zk_g16_prove or zk_g16_prove_compact)
// for k, a key on the curve c binds, and adds up the sums it returns.
func prove[S, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], k *Groth16Key, s *Groth16Slot, op string, call func(g1, g2 unsafe.Pointer, t *C.zk_g16_timing, e *errBuf) C.int) (refprover.MSMResults[G1J, G2J], Groth16Timing, error) {
	var res refprover.MSMResults[G1J, G2J]
	if k == nil || k.ptr == nil {
		return res, Groth16Timing{}, fmt.Errorf("%s: nil or freed key: %w", op, ErrInvalid)
	}
	if s == nil || s.ptr == nil {
		return res, Groth16Timing{}, fmt.Errorf("%s: nil or freed slot: %w", op, ErrInvalid)
	}
	if c.ID() != k.curve || s.curve != k.curve {
		return res, Groth16Timing{}, fmt.Errorf("%s: a %s proof of a %s key in a slot of a %s key: %w", op, curve.Title(c.ID()), curve.Title(k.curve), curve.Title(s.curve), ErrInvalid)
	}
	// One sum per set, or per chunk of a streamed key's sets: C memory, so
	// that the C side may write them from its threads. The Jacobian points
	// are gnark-crypto's, whose layout the C side writes (msm.h).
	p := k.info.Partials
	n1 := p[0] + p[1] + p[2] + p[3]
	j1, j2 := int(unsafe.Sizeof(*new(G1J))), int(unsafe.Sizeof(*new(G2J)))
	buf := C.calloc(C.size_t(max(1, n1*j1+p[4]*j2)), 1)
	defer C.free(buf)
	g1 := unsafe.Slice((*G1J)(buf), n1)
	g2 := unsafe.Slice((*G2J)(unsafe.Add(buf, n1*j1)), p[4])
	var t C.zk_g16_timing
	var e errBuf
	rc := call(buf, unsafe.Add(buf, n1*j1), &t, &e)
	if err := check(op, rc, &e); err != nil {
		return res, Groth16Timing{}, err
	}
	var sums [4]G1J
	at := 0
	for i := range sums {
		sums[i] = sumOf(g1[at:at+p[i]], c.G1Infinity(), c.G1Add)
		at += p[i]
	}
	res.Ar, res.Bs1, res.Krs, res.Krs2, res.Bs2 = sums[0], sums[1], sums[2], sums[3], sumOf(g2, c.G2Infinity(), c.G2Add)
	return res, Groth16Timing{
		Upload: msDuration(t.upload_ms), Evaluate: msDuration(t.eval_ms), NTT: msDuration(t.ntt_ms), MSMG1: msDuration(t.msm_g1_ms),
		MSMG2Start: msDuration(t.msm_g2_start_ms), MSMG2: msDuration(t.msm_g2_ms), Total: msDuration(t.total_ms),
	}, nil
}

// HostRegisterReadOnly reports whether device dev reads host memory
// registered read-only: a streamed key then pins its file's shared mapping in
// place (one copy in the page cache for every backend of the machine) instead
// of copying its points into pinned memory of its own.
func HostRegisterReadOnly(dev int) bool { return C.zk_g16_host_register_read_only(C.int(dev)) == 1 }
