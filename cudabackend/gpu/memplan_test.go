package gpu

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/cudabackend/csrc"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// TestMSMWorkAt2To24 checks the MSM working memory against a hand count at
// 2^24 scalars: window 20 bits, 13 windows, 13·2^24 digit pairs, four sort
// buffers of 4 bytes per pair (keys and values, double-buffered), 13·2^19
// buckets of 192 bytes (G1) or 384 (G2), and small parts beside them.
func TestMSMWorkAt2To24(t *testing.T) {
	const n = 1 << 24
	p := csrc.MakePlan(n, 132*2048, 132*2048)
	if p.C != 20 || p.NWin != 13 || p.Pairs != 13<<24 {
		t.Fatalf("plan at 2^24: c %d, %d windows, %d pairs; want 20, 13, 13·2^24", p.C, p.NWin, p.Pairs)
	}
	for _, tc := range []struct {
		group   int
		buckets uint64
	}{{groupG1, 13 << 19 * 192}, {groupG2, 13 << 19 * 384}} {
		w := csrc.WorkOf(tc.group, p, n, true, csrc.SortBytesBound(p.Pairs, p.KeyBits), 0, true)
		if w.Keys != 13<<26 || w.Vals != 13<<26 || w.Buckets != tc.buckets || w.Scalars != 0 {
			t.Errorf("group %d: keys %d, vals %d, buckets %d, scalars %d", tc.group, w.Keys, w.Vals, w.Buckets, w.Scalars)
		}
		base := 4*13<<26 + tc.buckets
		if w.Total < base || w.Total > base+512<<20 {
			t.Errorf("group %d: total %d, want the sort buffers and buckets (%d) plus at most 512 MiB (partial sums and reduction, every SM full)", tc.group, w.Total, base)
		}
		if got := MSMWorkBytes(tc.group, n, BoundResidency(132)); got != w.Total {
			t.Errorf("MSMWorkBytes(%d, 2^24, 132) = %d, want %d", tc.group, got, w.Total)
		}
	}
	// A chunk beyond 2^25 scalars does not grow the workspace.
	if a, b := MSMWorkBytes(groupG1, 1<<25, BoundResidency(0)), MSMWorkBytes(groupG1, 1<<27, BoundResidency(0)); a != b {
		t.Errorf("MSM workspace at 2^25 %d, at 2^27 %d: want equal (chunked)", a, b)
	}
}

// TestProofWorkAt2To24 checks that the per-proof estimate at chain 2^24 is
// at least the device memory per proof in flight, beyond the key and slots,
// that the daemon took on an H200 (BENCHMARKS.md, "Larger sizes": the
// threshold below), which an older estimate of 64 bytes a constraint missed
// by a factor of six.
func TestProofWorkAt2To24(t *testing.T) {
	const logN = 24
	nwires := 1<<24 + 3 // chain 2^24: 2^24 constraints, one wire each, plus 1, X, Y, S
	got := PartitionDeviceBytes(logN, nwires, BoundResidency(132))
	if got < 7_000_000_000 {
		t.Errorf("PartitionDeviceBytes(2^24) = %d, below the 7 GB measured", got)
	}
	// Two MSMs at once: G1 about 4.9 GB, G2 about 6.2 GB, both split (their
	// ones' buffers beside Pippenger's), and W's classification, each
	// stream's share in whole blocks of the pool.
	b := BoundResidency(132)
	if want := ProofPoolBytes(MSMSplitWorkBytes(groupG1, uint64(nwires), b)+MSMClassifyBytes(uint64(nwires)), MSMSplitWorkBytes(groupG2, uint64(nwires), b)); got != want {
		t.Errorf("PartitionDeviceBytes(2^24) = %d, want the G1 and G2 split MSMs' and the classification's %d", got, want)
	}
	// The split adds little to the dense MSMs: the classification (9 bytes a
	// wire, and the selection's storage) and the ones' partial sums.
	dense := MSMWorkBytes(groupG1, uint64(nwires), b) + MSMWorkBytes(groupG2, uint64(nwires), b)
	if extra := got - dense; got < dense || extra > 9*uint64(nwires)+256<<20 {
		t.Errorf("PartitionDeviceBytes(2^24) = %d, the dense MSMs take %d: the split adds %d", got, dense, extra)
	}
	// Streamed in chunks of 2^22, every MSM is over at most 2^22 points.
	s := KeyShape{Curve: ecc.BLS12_381, LogN: logN, NbWires: uint64(nwires), NbPublic: 3, NbA: uint64(nwires), NbB: uint64(nwires), NbK: uint64(nwires - 3), NbZ: 1<<24 - 1}
	if got, want := ProofWorkBytes(s, 1<<22, BoundResidency(132)), ProofPoolBytes(MSMWorkBytes(groupG1, 1<<22, BoundResidency(132)), MSMWorkBytes(groupG2, 1<<22, BoundResidency(132))); got != want {
		t.Errorf("ProofWorkBytes(2^24, chunk 2^22) = %d, want %d", got, want)
	}
}

// TestPlanDevice checks the choice between a resident and a streamed key at
// chain 2^24 with two slots: resident on an H200, streamed under 24 and 16 GB
// caps in chunks that fit, refused under 4 GB, and never a plan above the room.
func TestPlanDevice(t *testing.T) {
	const nwires = 1<<24 + 3
	s := KeyShape{Curve: ecc.BLS12_381, LogN: 24, NbWires: nwires, NbPublic: 3, NbA: nwires - 1, NbB: nwires - 2, NbK: nwires - 3, NbZ: 1<<24 - 1}
	cases := []struct {
		room           uint64
		streamed, lean bool
	}{
		{140 << 30, false, false},
		{23 << 30, true, false},
		{15 << 30, true, false},
		{8 << 30, true, false},
		{4 << 30, true, true},
		{2 << 30, true, true},
		{512 << 20, true, true},
	}
	prev := uint64(1 << 62)
	for _, tc := range cases {
		p, err := PlanDevice(s, 2, tc.room, BoundResidency(132), MSMMaxDepth)
		if err != nil {
			t.Fatalf("room %d MiB: %v", tc.room>>20, err)
		}
		if p.Streamed() != tc.streamed || p.Lean() != tc.lean {
			t.Errorf("room %d MiB: %v, want streamed %v, lean %v", tc.room>>20, p, tc.streamed, tc.lean)
		}
		if p.Total() > tc.room {
			t.Errorf("room %d MiB: plan %v totals %d, above the room", tc.room>>20, p, p.Total())
		}
		if p.Lean() {
			if p.Slots < 1 || p.Slots > 2 || p.HBlock&(p.HBlock-1) != 0 || p.HBlock < HStreamMinBlock(24) {
				t.Errorf("room %d MiB: %v", tc.room>>20, p)
			}
			if p.SlotBytes != LeanSlotDeviceBytes(p.HBlock) {
				t.Errorf("room %d MiB: slot of %d bytes, want H's blocks alone (%d)", tc.room>>20, p.SlotBytes, LeanSlotDeviceBytes(p.HBlock))
			}
			continue
		}
		if p.Streamed() {
			if p.Chunk&(p.Chunk-1) != 0 || p.Chunk < MinStreamChunk || p.Chunk > prev {
				t.Errorf("room %d MiB: chunk %d (previous %d)", tc.room>>20, p.Chunk, prev)
			}
			prev = p.Chunk
			// The next larger chunk would not have fitted.
			if p.Chunk < MaxStreamChunk {
				q := p
				q.Chunk *= 2
				q.KeyBytes = StreamKeyDeviceBytes(s, q.Chunk, false) + DomainBytes(24)
				q.ProofBytes = ProofWorkBytes(s, q.Chunk, BoundResidency(132))
				if q.Total() <= tc.room {
					t.Errorf("room %d MiB: chunk %d chosen but %d fits", tc.room>>20, p.Chunk, q.Chunk)
				}
			}
		}
	}
	// Below the least lean plan: refused, naming that least, which fits one
	// slot in just that much and nothing in less.
	_, err := PlanDevice(s, 2, 1<<20, BoundResidency(132), MSMMaxDepth)
	var least uint64
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("room of 1 MiB: err = %v, want ErrOutOfMemory", err)
	}
	if _, serr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "needs at least "):], "needs at least %d MiB", &least); serr != nil {
		t.Fatalf("refusal %q names no least: %v", err, serr)
	}
	if p, err := PlanDevice(s, 2, least<<20, BoundResidency(132), MSMMaxDepth); err != nil || p.Slots != 1 || !p.Lean() {
		t.Errorf("room of the least plan (%d MiB): %v, %v; want it lean, one slot", least, p, err)
	}
	if _, err := PlanDevice(s, 2, (least-1)<<20, BoundResidency(132), MSMMaxDepth); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("room of %d MiB, below the least: err = %v, want ErrOutOfMemory", least-1, err)
	}
}

// TestPlanDeviceCurves checks the plans of keys the lean path does not take
// (H out of core is BLS12-381's, in gnark's form): a BN254 key, and a
// BLS12-381 key in snarkjs's H form. Each is resident when it fits (a BN254
// key's points two thirds of BLS12-381's), streamed when only that fits, and
// refused below its least streamed plan, naming it, never lean; a shape of
// no curve the kernels prove on is refused as invalid.
func TestPlanDeviceCurves(t *testing.T) {
	const nwires = 1 << 20
	shape := func(id ecc.ID, form keyfile.HForm) KeyShape {
		return KeyShape{Curve: id, HForm: form, LogN: 20, NbWires: nwires, NbPublic: 3, NbA: nwires - 1, NbB: nwires - 2, NbK: nwires - 3, NbZ: form.NbZ(1 << 20)}
	}
	r := BoundResidency(132)
	bls := shape(ecc.BLS12_381, keyfile.HFormGnark)
	bn := shape(ecc.BN254, keyfile.HFormGnark)
	if got, want := KeyShapeDeviceBytes(bn)*3, KeyShapeDeviceBytes(bls)*2; got != want {
		t.Errorf("BN254 key bytes ×3 = %d, BLS12-381's ×2 = %d: want equal", got, want)
	}
	for _, s := range []KeyShape{bn, shape(ecc.BLS12_381, keyfile.HFormSnarkjs)} {
		name := fmt.Sprintf("%s, H form %d", curve.Title(s.Curve), s.HForm)
		p, err := PlanDevice(s, 2, 64<<30, r, 0)
		if err != nil || p.Streamed() {
			t.Errorf("%s, 64 GiB: %v, %v; want resident", name, p, err)
		}
		// Just under the resident plan: streamed.
		q, err := PlanDevice(s, 2, p.Total()-1, r, 0)
		if err != nil || !q.Streamed() || q.Lean() {
			t.Errorf("%s, room just under resident: %v, %v; want streamed, not lean", name, q, err)
		}
		_, err = PlanDevice(s, 2, 1<<20, r, 0)
		if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "needs at least") || !strings.Contains(err.Error(), "streamed") {
			t.Errorf("%s, 1 MiB: %v; want ErrOutOfMemory naming its least streamed plan", name, err)
		}
	}
	if _, err := PlanDevice(shape(ecc.BW6_761, keyfile.HFormGnark), 2, 64<<30, r, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("a BW6-761 shape: %v, want ErrInvalid", err)
	}
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), curve.Title(ecc.BW6_761)) {
				t.Errorf("KeyShapeDeviceBytes of a BW6-761 shape: panic %v, want one naming the curve", p)
			}
		}()
		KeyShapeDeviceBytes(shape(ecc.BW6_761, keyfile.HFormGnark))
	}()
}

// TestResidencyBound checks that the estimate with every SM full bounds the
// estimate with a device's own residency (an H200's MSM kernels hold 256
// threads per SM, 2 blocks of 128: 255 and 180 registers a thread), at every
// size the backend plans for.
func TestResidencyBound(t *testing.T) {
	h200 := Residency{Accum: [4]uint32{132 * 256, 132 * 256, 132 * 256, 132 * 256}, Reduce: [4]uint32{132 * 256, 132 * 256, 132 * 256, 132 * 256}}
	for logN := uint32(10); logN <= 27; logN++ {
		n := 1 << logN
		dev, bound := PartitionDeviceBytes(logN, n+3, h200), PartitionDeviceBytes(logN, n+3, BoundResidency(132))
		if dev > bound {
			t.Errorf("2^%d: %d bytes with the H200's residency, above the bound %d", logN, dev, bound)
		}
	}
}

// TestSplitWorkBound checks that MSMSplitWorkBytes (what admission counts for
// a split MSM whose counts it does not know) is at least what any split run
// over n classified scalars allocates: its rest (npip) through Pippenger, its
// ones summed apart, for shares of ones and rest from none to all.
func TestSplitWorkBound(t *testing.T) {
	for _, r := range []Residency{BoundResidency(132), {Accum: [4]uint32{132 * 256, 132 * 256, 132 * 256, 132 * 256}, Reduce: [4]uint32{132 * 256, 132 * 256, 132 * 256, 132 * 256}}} {
		for _, group := range []int{groupG1, groupG2} {
			g := group - 1
			for _, n := range []uint64{1, 1000, 1 << 16, 1<<20 + 3, 1<<22 + 3, 1 << 24, 1<<25 + 9} {
				// Bases without copies, and with those precomputing them
				// for n points (or for fewer: K's handle) picks.
				for _, maxd := range []int{1, 2, 5, MSMMaxDepth} {
					for _, on := range []uint64{n, n - n/8} {
						c, d := MSMPrecomputeChoice(on, maxd)
						bound := MSMSplitWorkBytesPre(group, n, c, d, r)
						if d == 1 && bound != MSMSplitWorkBytes(group, n, r) {
							t.Errorf("group %d, n %d: the bound without copies differs from MSMSplitWorkBytes", group, n)
						}
						// Every percent of rest, and the crossover's neighbours.
						rests := []uint64{}
						for pct := uint64(0); pct <= 100; pct++ {
							rests = append(rests, n*pct/100)
						}
						if x := csrc.PlainBelow(n, c, d); d > 1 {
							rests = append(rests, x, x+1, max(x, 1)-1)
						}
						for _, npip := range rests {
							npip = min(npip, n)
							for _, onesPct := range []uint64{0, 10, 50, 100} {
								nones := min(n-npip, n*onesPct/100)
								p := csrc.MakePlanPre(max(npip, 1), c, d, r.Accum[g], r.Reduce[g])
								w := csrc.WorkOf(group, p, n, true, csrc.SortBytesBound(p.Pairs, p.KeyBits), csrc.OnesThreads(nones, r.Accum[g]), npip > 0)
								if w.Total > bound {
									t.Errorf("group %d, n %d, copies c=%d d=%d: a split run with %d through Pippenger (%d copies read) and %d ones takes %d, above the bound %d", group, n, c, d, npip, p.Depth, nones, w.Total, bound)
								}
								// The crossover: fewer scalars read no copies, more do.
								if d > 1 && npip > 0 && (p.Depth > 1) != (npip > csrc.PlainBelow(n, c, d)) {
									t.Errorf("group %d, n %d, copies c=%d d=%d: the plan of %d reads %d copies; the crossover is %d", group, n, c, d, npip, p.Depth, csrc.PlainBelow(n, c, d))
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestPlanDeviceCopies checks the precomputed copies PlanDevice gives a
// resident key: chain 2^22 on an H200 gets them, within half the room its
// plan without them leaves; a key that fits resident only without them gets
// none (and stays resident); a limit of 0 or 1 turns them off, a larger one
// caps them, and one outside [0, MSMMaxDepth] is refused.
func TestPlanDeviceCopies(t *testing.T) {
	const nwires = 1<<22 + 3
	s := KeyShape{Curve: ecc.BLS12_381, LogN: 22, NbWires: nwires, NbPublic: 3, NbA: nwires - 1, NbB: nwires - 2, NbK: nwires - 3, NbZ: 1<<22 - 1}
	r := BoundResidency(132)
	const room = 140 << 30
	p, err := PlanDevice(s, 3, room, r, MSMMaxDepth)
	if err != nil {
		t.Fatal(err)
	}
	if p.Streamed() || p.Depth < 2 {
		t.Fatalf("chain 2^22 with 140 GiB: %v, want resident with copies", p)
	}
	plain := DevicePlan{KeyBytes: KeyShapeDeviceBytes(s) + DomainBytes(22), SlotBytes: SlotDeviceBytes(22, nwires), ProofBytes: ProofWorkBytes(s, 0, r), Slots: 3}
	if p.Total() > plain.Total()+(room-plain.Total())/2 {
		t.Errorf("plan %v takes %d bytes, more than half the %d its plan without copies leaves", p, p.Total()-plain.Total(), room-plain.Total())
	}
	if p.KeyBytes != plain.KeyBytes+KeyCopiesBytes(s, p.Depth) || p.ProofBytes != ProofWorkBytesDepth(s, 0, r, p.Depth) {
		t.Errorf("plan %v: key %d, proof %d bytes; want the copies' %d and %d", p, p.KeyBytes, p.ProofBytes, plain.KeyBytes+KeyCopiesBytes(s, p.Depth), ProofWorkBytesDepth(s, 0, r, p.Depth))
	}
	for i, cp := range KeyCopiesOf(s, p.Depth) {
		if cp.D < 2 || cp.D > p.Depth {
			t.Errorf("set %d: %d copies (c=%d) under a limit of %d", i, cp.D, cp.C, p.Depth)
		}
	}
	// Just enough room resident without copies: none, still resident.
	q, err := PlanDevice(s, 3, plain.Total(), r, MSMMaxDepth)
	if err != nil || q.Streamed() || q.Depth > 1 {
		t.Errorf("room for the plan without copies: %v (%v), want resident without copies", q, err)
	}
	for _, off := range []int{0, 1} {
		if q, err := PlanDevice(s, 3, room, r, off); err != nil || q.Depth > 1 || q.Total() != plain.Total() {
			t.Errorf("at most %d copies: %v (%v), want no copies", off, q, err)
		}
	}
	if q, err := PlanDevice(s, 3, room, r, 3); err != nil || q.Depth != 3 {
		t.Errorf("at most 3 copies: %v (%v), want 3 copies", q, err)
	}
	for _, bad := range []int{-1, MSMMaxDepth + 1} {
		if _, err := PlanDevice(s, 3, room, r, bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "precomputed copies") {
			t.Errorf("at most %d copies: err = %v, want ErrInvalid naming the copies", bad, err)
		}
	}
}

// TestPlanDeviceCopiesNeverCrowd checks, over key sizes, slot counts and
// rooms, that a plan with copies fits its room, that the copies take at most
// half of what the plan without them leaves, and that they never change the
// plan's mode: a key resident without copies is resident with them, with the
// same slots.
func TestPlanDeviceCopiesNeverCrowd(t *testing.T) {
	r := BoundResidency(132)
	for logN := uint32(10); logN <= 26; logN += 2 {
		n := uint64(1) << logN
		s := KeyShape{Curve: ecc.BLS12_381, LogN: logN, NbWires: n + 3, NbPublic: 3, NbA: n, NbB: n - 1, NbK: n, NbZ: n - 1}
		for slots := 1; slots <= 4; slots++ {
			for room := uint64(1 << 30); room <= 160<<30; room = room * 3 / 2 {
				p, err := PlanDevice(s, slots, room, r, MSMMaxDepth)
				if err != nil {
					continue
				}
				if p.Total() > room {
					t.Errorf("2^%d, %d slots, room %d MiB: %v totals %d MiB", logN, slots, room>>20, p, p.Total()>>20)
				}
				if p.Streamed() {
					if p.Depth > 1 {
						t.Errorf("2^%d: streamed plan %v with copies", logN, p)
					}
					continue
				}
				plain := DevicePlan{KeyBytes: KeyShapeDeviceBytes(s) + DomainBytes(int(logN)), SlotBytes: SlotDeviceBytes(logN, int(s.NbWires)), ProofBytes: ProofWorkBytes(s, 0, r), Slots: slots}
				if plain.Total() > room {
					t.Errorf("2^%d, %d slots, room %d MiB: resident %v, but the plan without copies (%d MiB) does not fit", logN, slots, room>>20, p, plain.Total()>>20)
					continue
				}
				// (The copies' MSMs may take a pool block less than the plain
				// ones: then the copies cost nothing here.)
				if p.Total() > plain.Total() && p.Total()-plain.Total() > (room-plain.Total())/2 {
					t.Errorf("2^%d, %d slots, room %d MiB: the copies of %v take %d MiB, more than half of the %d MiB left", logN, slots, room>>20, p, (p.Total()-plain.Total())>>20, (room-plain.Total())>>20)
				}
			}
		}
	}
}

// TestConstraintsDeviceBytes checks the device memory of a constraint system
// counted from its matrices: 5 coefficients of 32 bytes, three row indexes of
// 3 words, 6 terms of 8 bytes.
func TestConstraintsDeviceBytes(t *testing.T) {
	m := &constraints.Matrices{
		NbWires:      4,
		Coefficients: make([][4]uint64, 5),
		A:            constraints.Matrix{Start: []uint32{0, 2, 3}, Wire: []uint32{0, 1, 2}, Coeff: []uint32{1, 1, 2}},
		B:            constraints.Matrix{Start: []uint32{0, 1, 2}, Wire: []uint32{0, 3}, Coeff: []uint32{1, 4}},
		C:            constraints.Matrix{Start: []uint32{0, 0, 1}, Wire: []uint32{3}, Coeff: []uint32{1}},
	}
	if got, want := ConstraintsDeviceBytes(m), uint64(5*32+3*3*4+6*8); got != want {
		t.Errorf("ConstraintsDeviceBytes = %d, want %d", got, want)
	}
}
