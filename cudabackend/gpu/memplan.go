package gpu

// This file is the device-memory accounting of a Groth16 key and its proofs:
// what LoadGroth16Key, NewSlot and Prove allocate, for admission. Every size
// comes from the C headers the kernels allocate from (package csrc: an MSM's
// plan and working memory in msm_plan.h; a slot, a streamed key, a compact W
// and a constraint system in groth16.h), which need no CUDA: this builds,
// and its tests run, on any machine with a C compiler; the GPU tests compare
// the estimates with cudaMemGetInfo. What is Go here is policy: how a key's
// MSMs add up on a proof's two streams, and how PlanDevice trades slots,
// copies and streaming against the room.

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/cudabackend/csrc"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// maxThreadsPerSM bounds the threads an SM keeps resident (2048 on every
// architecture from sm_80 to sm_90): the MSM's partial-sum and reduction
// buffers grow with the resident threads, so the bound gives an upper bound.
const maxThreadsPerSM = 2048

// DefaultSMCount is the SM count estimates assume when the device's is not
// known (an H200 has 132).
const DefaultSMCount = 132

// Residency is how many threads of the MSM's accumulation (k_accum0) and
// reduction (k_reduce) kernels a device keeps at once, for each group,
// indexed by msm.h's group less one (BLS12-381's G1, G2, then BN254's): the
// MSM's thread counts, and so its partial-sum buffers, follow them.
// DeviceResidency asks the device; BoundResidency bounds it.
type Residency struct {
	Accum, Reduce [4]uint32
}

// BoundResidency is an upper bound of any device's Residency with sms
// multiprocessors (0: DefaultSMCount): every SM full. Estimates made with it
// are upper bounds: every size grows with the residency.
func BoundResidency(sms int) Residency {
	if sms <= 0 {
		sms = DefaultSMCount
	}
	t := uint32(sms * maxThreadsPerSM)
	return Residency{Accum: [4]uint32{t, t, t, t}, Reduce: [4]uint32{t, t, t, t}}
}

// MSMMaxDepth is the most precomputed copies of an MSM's bases
// (csrc.MaxDepth).
const MSMMaxDepth = csrc.MaxDepth

// Groups of an MSM, as msm.h numbers them: BLS12-381's.
const (
	groupG1 = csrc.G1
	groupG2 = csrc.G2
)

// groupsOf returns msm.h's groups of a curve's G1 and G2, and groth16.h's
// number of the curve (ntt.h's zk_ntt_curve), or an error wrapping ErrInvalid
// for a curve the kernels do not prove on.
func groupsOf(id ecc.ID) (g1, g2, c int, err error) {
	switch id {
	case ecc.BLS12_381:
		return csrc.G1, csrc.G2, csrc.CurveBLS12381, nil
	case ecc.BN254:
		return csrc.BN254G1, csrc.BN254G2, csrc.CurveBN254, nil
	}
	return 0, 0, 0, fmt.Errorf("gpu: keys on %s: the kernels prove on BLS12-381 and BN254: %w", curve.Title(id), ErrInvalid)
}

// MSMPrecomputeChoice is msm_plan.h's zk_msm_precompute_choice: the window c
// and the copies d (at most maxDepth) that precomputing the bases of an MSM
// over n points makes; d = 1 (c = 0) when copies do not pay.
func MSMPrecomputeChoice(n uint64, maxDepth int) (c, d int) {
	return csrc.PrecomputeChoice(n, maxDepth)
}

// MSMBasesBytes is zk_msm_bases_bytes: the device memory of n resident points
// of group (1: G1, 2: G2) with depth precomputed copies (1: none).
func MSMBasesBytes(group int, n uint64, depth int) uint64 { return csrc.BasesBytes(group, n, depth) }

// MSMWorkBytes is the device working memory one MSM of n scalars already on
// the device takes from the MSM pool (group 1: G1, 2: G2) on a device of
// residency r: msm_plan.h's zk_msm_work_bound, its allocations with the
// radix sort's bound, each rounded up to the pool's granularity. With the
// device's own residency it is what msm.cu allocates; with BoundResidency an
// upper bound.
func MSMWorkBytes(group int, n uint64, r Residency) uint64 {
	return MSMWorkBytesPre(group, n, 0, 1, r)
}

// MSMWorkBytesPre is MSMWorkBytes over bases with depth precomputed copies
// for window c (MSMPrecomputeChoice; depth 1: none), as zk_msm_work_bytes
// counts a handle with copies.
func MSMWorkBytesPre(group int, n uint64, c, depth int, r Residency) uint64 {
	return csrc.WorkBound(group, n, c, depth, r.Accum[group-1], r.Reduce[group-1])
}

// MSMSplitWorkBytes bounds the device working memory of one witness-aware
// (split) MSM over a classification of n scalars, whatever their counts
// (zk_msm_split_work_bound): every scalar through Pippenger and every one a
// 1 at once (a split run's rest and ones are each at most n).
func MSMSplitWorkBytes(group int, n uint64, r Residency) uint64 {
	return MSMSplitWorkBytesPre(group, n, 0, 1, r)
}

// MSMSplitWorkBytesPre is MSMSplitWorkBytes over bases with depth copies for
// window c, as zk_msm_split_work_bytes counts it: a rest shorter than the
// crossover (zk_msm_plain_below) plans without the copies, in another window.
func MSMSplitWorkBytesPre(group int, n uint64, c, depth int, r Residency) uint64 {
	return csrc.SplitWorkBound(group, n, c, depth, r.Accum[group-1], r.Reduce[group-1])
}

// MSMClassifyBytes is the device memory W's classification for the split
// takes for n scalars (zk_msm_classify_work): two index lists, the classes,
// the counts and the selection's storage, each as the pool rounds it.
func MSMClassifyBytes(n uint64) uint64 { return csrc.ClassifyWork(n) }

// KeyShape is what the device accounting needs of a proving key.
type KeyShape struct {
	Curve    ecc.ID        // BLS12-381 or BN254 (groupsOf)
	HForm    keyfile.HForm // how its proofs compute H
	LogN     uint32        // the domain is 2^LogN
	NbWires  uint64
	NbPublic uint64
	NbA, NbB uint64 // points of G1 A and of G1 B (and G2 B), infinity left out
	NbK, NbZ uint64
}

// groups returns s's curve's MSM groups and groth16.h number (groupsOf). A
// shape of another curve is a caller's bug (PlanDevice refuses one by name
// before any of the functions that call this): it panics, naming it.
func (s KeyShape) groups() (g1, g2, c int) {
	g1, g2, c, err := groupsOf(s.Curve)
	if err != nil {
		panic(fmt.Sprintf("gpu: device accounting of a key shape: %v", err))
	}
	return g1, g2, c
}

// ShapeOf returns pk's shape.
func ShapeOf[G1, G2 any](pk *keyfile.ProvingKey[G1, G2]) KeyShape {
	return KeyShape{
		Curve: curve.IDOf[G1](), HForm: pk.HForm,
		LogN: uint32(bits.TrailingZeros64(pk.DomainSize)), NbWires: pk.NbWires, NbPublic: pk.NbPublic,
		NbA: uint64(len(pk.G1A)), NbB: uint64(len(pk.G1B)), NbK: uint64(len(pk.G1K)), NbZ: uint64(len(pk.G1Z)),
	}
}

// ProofWorkBytes is the device working memory one proof in flight takes
// beyond its key and slot: the four G1 MSMs run one after another on the
// proof's stream (each reuses what the one before freed; groth16.cu runs the
// longest first) while the G2 MSM runs on the second stream with its own.
// chunk > 0 is a streamed key's chunk length: every MSM then runs over at
// most chunk points, dense. A resident key's MSMs over W (A, B, K, G2 B) may
// run split (the switch can change between proofs): counted split, which
// bounds dense too, plus W's classification, held for the whole proof; as
// groth16.cu's key_work_init counts them.
func ProofWorkBytes(s KeyShape, chunk uint64, r Residency) uint64 {
	return ProofWorkBytesDepth(s, chunk, r, 1)
}

// ProofWorkBytesDepth is ProofWorkBytes for a resident key whose point sets
// keep up to depth precomputed copies each (KeyCopiesOf; 1: none); a streamed
// key has none.
func ProofWorkBytesDepth(s KeyShape, chunk uint64, r Residency, depth int) uint64 {
	g1, g2 := proofStreamsWork(s, chunk, false, 0, r, depth)
	return ProofPoolBytes(g1, g2)
}

// MSMPoolBlock is the step in which the MSM pool reserves device memory: every
// reservation of a proof TestGroth16ProofDeviceMemory measured was a multiple
// of 32 MiB, once above the sum of its allocations (BENCHMARKS.md, "The G1
// MSM's upload in pieces").
const MSMPoolBlock = 32 << 20

// ProofPoolBytes is what the MSM pool reserves for a proof whose G1 stream
// allocates g1 bytes and G2 stream g2 (each allocation rounded as msm_plan.h
// rounds it): each stream's share rounded up to whole MSMPoolBlocks, the last
// block of each possibly part used.
func ProofPoolBytes(g1, g2 uint64) uint64 {
	blocks := func(b uint64) uint64 { return (b + MSMPoolBlock - 1) / MSMPoolBlock * MSMPoolBlock }
	return blocks(g1) + blocks(g2)
}

// proofStreamsWork is the MSM working memory of one proof on its G1 stream
// (W's classification included) and on its G2 stream, as groth16.cu's
// key_work_init counts them (KeyInfo.WorkG1, WorkG2): each MSM run as
// groth16.h's zk_g16_proof_runs says, with msm_plan.h's bounds; a resident
// key's sets with their copies (depth), a lean key's windows at most maxC
// bits.
func proofStreamsWork(s KeyShape, chunk uint64, lean bool, maxC int, r Residency, depth int) (g1, g2 uint64) {
	group1, group2, _ := s.groups()
	runs, classify := csrc.ProofRuns(s.NbWires, s.NbA, s.NbB, s.NbK, s.NbZ, chunk, lean)
	cp := KeyCopiesOf(s, depth)
	for set, run := range runs {
		group := group1
		if set == csrc.SetB2 {
			group = group2
		}
		var w uint64
		switch run.Kind {
		case csrc.RunNone:
			continue
		case csrc.RunStream:
			w = csrc.StreamWorkBound(group, run.N, chunk, maxC, r.Accum[group-1], r.Reduce[group-1])
		case csrc.RunSplit:
			w = MSMSplitWorkBytesPre(group, run.N, cp[set].C, cp[set].D, r)
		default:
			w = MSMWorkBytesPre(group, run.N, cp[set].C, cp[set].D, r)
		}
		if group == group2 {
			g2 = w
		} else {
			g1 = max(g1, w)
		}
	}
	if classify > 0 {
		g1 += MSMClassifyBytes(classify)
	}
	return g1, g2
}

// SetCopies is the precomputed copies of one of a resident key's point sets
// (msm.h's zk_msm_precompute): the window C they are made for (0: none) and
// their count D (1: the points alone).
type SetCopies struct{ C, D int }

// KeyCopiesOf is the copies a resident key of shape s keeps of its point sets
// A, B, K, Z (G1) and B (G2) with at most depth each: MSMPrecomputeChoice for
// each set's length, as groth16.cu asks msm.cu for them.
func KeyCopiesOf(s KeyShape, depth int) [5]SetCopies {
	var out [5]SetCopies
	for i, n := range []uint64{s.NbWires, s.NbWires, s.NbK, s.NbZ, s.NbWires} {
		out[i].C, out[i].D = MSMPrecomputeChoice(n, depth)
	}
	return out
}

// KeyCopiesBytes is the device memory the copies of KeyCopiesOf(s, depth)
// take beyond the points themselves.
func KeyCopiesBytes(s KeyShape, depth int) uint64 {
	var total uint64
	cp := KeyCopiesOf(s, depth)
	group1, group2, _ := s.groups()
	for i, n := range []uint64{s.NbWires, s.NbWires, s.NbK, s.NbZ, s.NbWires} {
		group := group1
		if i == 4 {
			group = group2
		}
		total += MSMBasesBytes(group, n, cp[i].D) - MSMBasesBytes(group, n, 1)
	}
	return total
}

// StreamKeyDeviceBytes is the device memory a streamed key holds for chunks
// of chunk points (groth16.h's zk_g16_stream_key_device_bytes): two chunk
// buffers of each group's points, two of scalars for each group, and, unless
// its proofs stream too (lean), the wire index of every A and B point.
func StreamKeyDeviceBytes(s KeyShape, chunk uint64, lean bool) uint64 {
	_, _, c := s.groups()
	return csrc.StreamKeyDeviceBytes(c, chunk, s.NbA, s.NbB, lean)
}

// LeanSlotDeviceBytes is the device memory one slot of a key whose proofs
// stream holds (groth16.h's zk_g16_lean_slot_device_bytes): H's blocks of
// hBlock elements, nothing of the partition.
func LeanSlotDeviceBytes(hBlock uint64) uint64 { return csrc.LeanSlotDeviceBytes(hBlock) }

// LeanSlotHostBytes is the pinned host memory one such slot holds (groth16.h's
// zk_g16_lean_slot_host_bytes): W, A, B, H's scratch, A's and B's scalars,
// and the index lists of A's, B's and K's scalars for ProveOptions.LeanSplit.
func LeanSlotHostBytes(s KeyShape) uint64 {
	return csrc.LeanSlotHostBytes(s.NbWires, s.LogN, s.NbA, s.NbB)
}

// SlotDeviceBytes is the device memory one slot (Groth16Slot) holds for a
// domain of 2^logN and nwires wires (groth16.h's zk_g16_slot_device_bytes):
// W, A, B and C, and the area a compact W needs beside them
// (CompactDeviceBytes).
func SlotDeviceBytes(logN uint32, nwires int) uint64 {
	return csrc.SlotDeviceBytes(uint64(nwires), logN)
}

// CompactWords is the uint64 words of each bitmap of a compact W of nwires
// wires (groth16.h's zk_g16_compact_words): wire i is bit i%64 of word i/64.
func CompactWords(nwires int) int { return csrc.CompactWords(nwires) }

// CompactDeviceBytes is the device memory a slot holds for a compact W of
// nwires wires besides its W, A, B and C (groth16.h's
// zk_g16_compact_device_bytes): both bitmaps, four flag words and the ranks.
// The values borrow the slot's A, B and C buffers until A and B are evaluated.
func CompactDeviceBytes(nwires int) uint64 { return csrc.CompactDeviceBytes(nwires) }

// ConstraintsDeviceBytes is the device memory SetConstraints takes for m
// beside the key (groth16.h's zk_g16_constraints_device_bytes): the
// coefficient table, each matrix's row index and 8 bytes a term.
func ConstraintsDeviceBytes(m *constraints.Matrices) uint64 {
	terms := uint64(m.A.Terms() + m.B.Terms() + m.C.Terms())
	return csrc.ConstraintsDeviceBytes(m.NbConstraints(), uint64(len(m.Coefficients)), terms)
}

// SlotHostBytes is the pinned host memory one slot holds (groth16.h's
// zk_g16_slot_host_bytes): the staging of W, A and B.
func SlotHostBytes(logN uint32, nwires int) uint64 {
	return csrc.SlotHostBytes(uint64(nwires), logN)
}

// PartitionDeviceBytes is ProofWorkBytes for a key with a domain of 2^logN
// and nwires wires, every A and B point present and the key resident: what
// Describe reports per constraint before any key is loaded.
func PartitionDeviceBytes(logN uint32, nwires int, r Residency) uint64 {
	n := uint64(1) << logN
	w := uint64(nwires)
	return ProofWorkBytes(KeyShape{Curve: ecc.BLS12_381, LogN: logN, NbWires: w, NbA: w, NbB: w, NbK: w, NbZ: n - 1}, 0, r)
}

// Smallest and largest streamed chunk (points).
const (
	MinStreamChunk = 1 << 16
	MaxStreamChunk = csrc.MaxChunk
)

// HStreamMinBlock is the smallest block of H out of core for a domain of
// 2^logN (ntt.h's zk_h_stream_min_block: one whole row or column of the
// four-step matrix).
func HStreamMinBlock(logN uint32) uint64 { return csrc.HStreamMinBlock(logN) }

// maxHBlock is the largest block of H out of core a plan takes: past it a
// block only costs device memory, since a column block's 2D copy already moves
// rows of 2^19/N1 elements (16 KiB at N1 = 2^10) and the host's vectors, not
// the block, bound the passes. Not measured against larger blocks.
const maxHBlock = 1 << 19

// DevicePlan is how a key and its slots use the device: resident, or
// streamed in chunks.
type DevicePlan struct {
	Chunk      uint64 // points per streamed chunk; 0: the key is resident
	HBlock     uint64 // a streamed key's proofs stream too, H in blocks of HBlock elements; 0: a slot holds its partition
	StreamC    int    // streamed proofs: their MSMs' window at most StreamC bits (0: the cheapest)
	Depth      int    // a resident key's precomputed copies per point set, at most (KeyCopiesOf; 0, 1: none)
	KeyBytes   uint64 // the key's point sets (or its streaming buffers) and the NTT tables
	SlotBytes  uint64 // one slot's buffers
	ProofBytes uint64 // one proof's working memory
	Slots      int
}

// Streamed reports whether the key's points stay on the host.
func (p DevicePlan) Streamed() bool { return p.Chunk > 0 }

// Lean reports whether the key's proofs stream too: nothing of a partition is
// on the device but the block of it being worked on.
func (p DevicePlan) Lean() bool { return p.HBlock > 0 }

// LoadBytes is what loading the key reserves: the key and its slots.
func (p DevicePlan) LoadBytes() uint64 { return p.KeyBytes + uint64(p.Slots)*p.SlotBytes }

// Total is the key, its slots and every slot's proof at once.
func (p DevicePlan) Total() uint64 { return p.LoadBytes() + uint64(p.Slots)*p.ProofBytes }

func (p DevicePlan) String() string {
	mode := "resident"
	if p.Depth > 1 {
		mode = fmt.Sprintf("resident with up to %d copies of its points", p.Depth)
	}
	if p.Streamed() {
		mode = fmt.Sprintf("streamed in chunks of %d points", p.Chunk)
	}
	if p.Lean() {
		mode += fmt.Sprintf(", its proofs too (H in blocks of %d", p.HBlock)
		if p.StreamC > 0 {
			mode += fmt.Sprintf(", MSM windows of at most %d bits", p.StreamC)
		}
		mode += ")"
	}
	return fmt.Sprintf("%s: key %d MiB, %d slots of %d MiB, %d MiB per proof in flight", mode,
		p.KeyBytes>>20, p.Slots, p.SlotBytes>>20, p.ProofBytes>>20)
}

// PlanDevice decides how a key of shape s with slots slots uses room bytes of
// device memory: resident when the key, its slots and every slot's proof fit;
// otherwise streamed from host memory in the largest power-of-two chunk that
// fits; otherwise lean: the proofs stream too (nothing of a partition on the
// device but the block being worked on), in the largest chunk that fits with
// as many slots as fit, down to one; an error naming the least device memory
// the key needs when not even that fits (lean, one slot, the smallest chunk
// and block). r is the device's residency (DeviceResidency, or
// BoundResidency). Only BLS12-381 keys with gnark's H go lean (H out of
// core is BLS12-381's, in gnark's form): for any other the least is a
// streamed plan's.
//
// A resident key also gets precomputed copies of its points (faster MSMs,
// msm.h's zk_msm_precompute), at most maxDepth per set (0 or 1: none; at
// most MSMMaxDepth), as many as fit in half the room its plan without them
// leaves (the other half stays for other keys); a plan resident without
// copies never turns streamed, nor loses slots (the caller tries slots
// first), for them.
func PlanDevice(s KeyShape, slots int, room uint64, r Residency, maxDepth int) (DevicePlan, error) {
	if maxDepth < 0 || maxDepth > MSMMaxDepth {
		return DevicePlan{}, fmt.Errorf("gpu: plan device: %d precomputed copies of a key's points: want 0 (none) to %d: %w", maxDepth, MSMMaxDepth, ErrInvalid)
	}
	if _, _, _, err := groupsOf(s.Curve); err != nil {
		return DevicePlan{}, err
	}
	tables := TablesBytes(s, false)
	p := DevicePlan{
		KeyBytes:   KeyShapeDeviceBytes(s) + tables,
		SlotBytes:  SlotDeviceBytes(s.LogN, int(s.NbWires)),
		ProofBytes: ProofWorkBytes(s, 0, r),
		Slots:      slots,
		Depth:      1,
	}
	if p.Total() <= room {
		spare := (room - p.Total()) / 2
		for d := maxDepth; d >= 2; d-- {
			q := p
			q.Depth = d
			q.KeyBytes = p.KeyBytes + KeyCopiesBytes(s, d)
			q.ProofBytes = ProofWorkBytesDepth(s, 0, r, d)
			if q.Total() <= p.Total()+spare {
				return q, nil
			}
		}
		return p, nil
	}
	longest := max(s.NbA, s.NbB, s.NbK, s.NbZ, 1)
	top := min(uint64(1)<<bits.Len64(longest-1), MaxStreamChunk) // the power of two at or above longest
	least := p
	for chunk := top; chunk >= MinStreamChunk; chunk /= 2 {
		q := p
		q.Chunk = chunk
		q.Depth = 0
		q.KeyBytes = StreamKeyDeviceBytes(s, chunk, false) + tables
		q.ProofBytes = ProofWorkBytes(s, chunk, r)
		if q.Total() <= room {
			return q, nil
		}
		least = q
	}
	if s.Curve != ecc.BLS12_381 || s.HForm != keyfile.HFormGnark {
		return p, fmt.Errorf("gpu: a %s key of 2^%d constraints needs at least %d MiB of device memory (%s), %d MiB are available: %w",
			curve.Title(s.Curve), s.LogN, (least.Total()+(1<<20)-1)>>20, least, room>>20, ErrOutOfMemory)
	}
	// Lean: the MSMs' window first (a narrower one costs every proof more
	// additions, by msm_plan.h's zk_msm_cost; each bit more doubles the
	// buckets), then more slots (one proof's H and staging beside another's
	// MSMs), then a larger chunk, then a larger block of H.
	least = DevicePlan{}
	natural := csrc.MakePlanStream(max(s.NbA, s.NbB, s.NbK, s.NbZ, 1), MinStreamChunk, 0, r.Accum[0], r.Reduce[0]).C
	for c := natural; c >= minStreamC; c-- {
		capC := c
		if c == natural {
			capC = 0 // no cap
		}
		for n := slots; n >= 1; n-- {
			for chunk := top; chunk >= min(MinStreamChunk, top); chunk /= 2 {
				for block := min(uint64(1)<<s.LogN, maxHBlock); block >= HStreamMinBlock(s.LogN); block /= 2 {
					q := LeanPlan(s, chunk, block, capC, n, r)
					if least.Slots == 0 || q.Total() < least.Total() {
						least = q
					}
					if q.Total() <= room {
						return q, nil
					}
				}
			}
		}
	}
	return p, fmt.Errorf("gpu: a key of 2^%d constraints needs at least %d MiB of device memory (%s), %d MiB are available: %w",
		s.LogN, (least.Total()+(1<<20)-1)>>20, least, room>>20, ErrOutOfMemory)
}

// TablesBytes is the device memory of the NTT tables the proofs of a key of
// shape s read, cached once per device and size: the domain's (DomainBytes)
// or, when its proofs stream (lean), H out of core's (ntt.h's
// zk_h_stream_tables_bytes), much smaller.
func TablesBytes(s KeyShape, lean bool) uint64 {
	if lean {
		return csrc.HStreamTablesBytes(s.LogN)
	}
	return DomainBytes(int(s.LogN))
}

// LeanPlan is the plan of a key of shape s whose points and proofs both
// stream: chunks of chunk points, H in blocks of block elements, MSM windows
// of at most maxC bits (0: the cheapest), slots slots.
func LeanPlan(s KeyShape, chunk, block uint64, maxC, slots int, r Residency) DevicePlan {
	return DevicePlan{
		Chunk:      chunk,
		HBlock:     block,
		StreamC:    maxC,
		KeyBytes:   StreamKeyDeviceBytes(s, chunk, true) + TablesBytes(s, true),
		SlotBytes:  LeanSlotDeviceBytes(block),
		ProofBytes: LeanProofWorkBytes(s, chunk, maxC, r),
		Slots:      slots,
	}
}

// minStreamC is the narrowest MSM window a lean plan takes: narrower windows
// save little bucket memory (2^(c-1) buckets a window) and add windows, each a
// pass over every point, while their digit pairs (sort memory) grow.
const minStreamC = 10

// LeanProofWorkBytes is the device working memory one proof of a lean key
// takes (groth16.cu's key_work_init): its G1 MSMs one after another on one
// stream, the largest counted, and its G2 MSM beside them, each streamed in
// chunks of chunk points into one set of buckets (msm_plan.h's
// zk_msm_stream_work_bound), windows of at most maxC bits.
func LeanProofWorkBytes(s KeyShape, chunk uint64, maxC int, r Residency) uint64 {
	return ProofPoolBytes(proofStreamsWork(s, chunk, true, maxC, r, 0))
}

// KeyShapeDeviceBytes is the device memory a resident key of shape s takes
// without copies (groth16.h's zk_g16_resident_key_device_bytes): G1 A and B
// and G2 B expanded to every wire, G1 K and Z as they are.
func KeyShapeDeviceBytes(s KeyShape) uint64 {
	_, _, c := s.groups()
	return csrc.ResidentKeyDeviceBytes(c, s.NbWires, s.NbK, s.NbZ)
}
