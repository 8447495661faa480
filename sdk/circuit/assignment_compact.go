package circuit

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// A compact wire assignment (version 3) is a wire assignment packed for the
// witnesses real circuits have, whose wires are mostly 0 or 1: two bitmaps
// and the values that are neither. It is what a synthesis host ships to the
// host that proves (docs/assignment.md; the same bitmaps as a compact
// partition, sdk.CompactLayout):
//
//	offset      size     field
//	0           4        magic "ZKWA"
//	4           4        version, big-endian uint32: 3
//	8           4        public wires, including the constant-one wire
//	12          4        secret wires
//	16          4        all wires, n
//	20          4        k, the wires whose value is neither 0 nor 1
//	24          4        the values' curve, big-endian uint32, numbered as a
//	                     key file's header numbers it (keyfile.CurveBLS12381,
//	                     keyfile.CurveBN254)
//	28          4        zero, so that the bitmaps' words are 8-byte aligned
//	32          8·m      the Other bitmap: m = ceil(n/64) little-endian uint64
//	                     words; bit i%64 of word i/64 is set when wire i is
//	                     neither 0 nor 1
//	32+8·m      8·m      the Bits bitmap: bit i set when wire i is 1
//	32+16·m     32·k     the k values of the Other wires, in wire order, each a
//	                     canonical big-endian scalar of that curve
//
// Wire i is the next value when its Other bit is set, else 1 when its Bits
// bit is set, else 0. No bit is set beyond wire n-1.
//
// The curve is in the header because nothing else ties the values to one:
// the counts of two circuits compiled on the two curves are often the same,
// a cluster's hosts match a partition to a circuit by its name alone, and a
// BN254 value is a canonical BLS12-381 one, so a mix-up would otherwise
// surface as an unsatisfied constraint, or not at all. Version 2, written
// before BN254 had compact assignments, is version 3 without the curve and
// reserved fields (a 24-byte header) and holds BLS12-381 values. BLS12-381's
// assignments are still written as version 2, which says as much, so that a
// cluster's hosts of an older build keep proving them while the cluster is
// upgraded; BN254's, which those hosts could not prove anyway, are version 3.
const (
	CompactAssignmentVersion = 3
	// compactAssignmentV2 is the version without a curve: BLS12-381's.
	compactAssignmentV2       = 2
	compactAssignmentHeader   = 32
	compactAssignmentHeaderV2 = 24
	// scalarBytes is the size of one encoded value: 32 on both curves
	// (curve.Scalar's Bytes).
	scalarBytes = 32
)

// compactAssignmentSize is the size of a compact assignment whose header has
// head bytes, of nbWires wires, nbOther of them neither 0 nor 1.
func compactAssignmentSize(head int, nbWires, nbOther uint64) int64 {
	return int64(head) + int64(16*sdk.CompactWords(nbWires)+nbOther*scalarBytes)
}

// MarshalCompactAssignment encodes the wire values W of a circuit with
// nbPublic public wires (the constant-one wire included) and nbSecret secret
// wires as a compact wire assignment, with up to threads goroutines. W's
// scalars S are either curve's fr.Element; the header tells that curve: a
// BLS12-381 one is written as version 2, which means it, a BN254 one as
// version 3, which names it.
func MarshalCompactAssignment[S ~[4]uint64, PS curve.Scalar[S]](W []S, nbPublic, nbSecret, threads int) ([]byte, error) {
	nw := sdk.CompactWords(uint64(len(W)))
	other, ones := make([]uint64, nw), make([]uint64, nw)
	k, err := sdk.PackBitsOf[S, PS](W, other, ones, max(1, threads))
	if err != nil {
		return nil, err
	}
	return MarshalCompactBits[S, PS](W, other, ones, k, nbPublic, nbSecret, threads)
}

// MarshalCompactBits is MarshalCompactAssignment for a W whose bitmaps are
// packed already (as SynthesizeInputCompact returns them): other marks the
// k values neither 0 nor 1, ones the 1s.
func MarshalCompactBits[S any, PS curve.Scalar[S]](W []S, other, ones []uint64, k uint64, nbPublic, nbSecret, threads int) ([]byte, error) {
	id := curve.ScalarIDOf[S]()
	fid, ok := keyfile.CurveIDOf(id)
	if !ok {
		return nil, fmt.Errorf("compact assignment: values of type %T are no curve's scalars", *new(S))
	}
	nw := sdk.CompactWords(uint64(len(W)))
	if uint64(len(other)) != nw || uint64(len(ones)) != nw {
		return nil, fmt.Errorf("compact assignment: %d wires need %d words per bitmap, got %d and %d", len(W), nw, len(other), len(ones))
	}
	if err := sdk.CheckCompactBits(uint64(len(W)), other, ones, k); err != nil {
		return nil, err
	}
	version, head := uint32(CompactAssignmentVersion), compactAssignmentHeader
	if fid == keyfile.CurveBLS12381 {
		version, head = compactAssignmentV2, compactAssignmentHeaderV2
	}
	b := make([]byte, compactAssignmentSize(head, uint64(len(W)), k))
	copy(b, AssignmentMagic)
	binary.BigEndian.PutUint32(b[4:], version)
	binary.BigEndian.PutUint32(b[8:], uint32(nbPublic))
	binary.BigEndian.PutUint32(b[12:], uint32(nbSecret))
	binary.BigEndian.PutUint32(b[16:], uint32(len(W)))
	binary.BigEndian.PutUint32(b[20:], uint32(k))
	if version == CompactAssignmentVersion {
		binary.BigEndian.PutUint32(b[24:], fid)
	}
	at := head
	for _, words := range [][]uint64{other, ones} {
		for _, x := range words {
			binary.LittleEndian.PutUint64(b[at:], x)
			at += 8
		}
	}
	values := b[at:]
	ranks := otherRanks(other)
	firstFailure(int(nw), threads, func(lo, hi int) (int, error) {
		if lo >= hi {
			return -1, nil
		}
		r := ranks[lo]
		for wd := lo; wd < hi; wd++ {
			for o := other[wd]; o != 0; o &= o - 1 {
				v := PS(&W[wd*64+bits.TrailingZeros64(o)]).Bytes()
				copy(values[r*scalarBytes:], v[:])
				r++
			}
		}
		return -1, nil
	})
	return b, nil
}

// otherRanks returns, for every word of the Other bitmap, how many bits are
// set in the words before it: where its values start.
func otherRanks(other []uint64) []uint64 {
	ranks := make([]uint64, len(other)+1)
	for i, o := range other {
		ranks[i+1] = ranks[i] + uint64(bits.OnesCount64(o))
	}
	return ranks
}

// compactHeader is what a compact assignment's header says, of either
// version.
type compactHeader struct {
	size             int    // the header's bytes
	curve            ecc.ID // the values' curve
	nbWires, nbOther uint64
}

// readCompactHeader reads a compact assignment's header (head: its first
// bytes, up to compactAssignmentHeader; its version is 2 or 3) and checks its
// curve, counts and the assignment's size against each other.
func readCompactHeader(head []byte, size int64) (compactHeader, error) {
	h := compactHeader{size: compactAssignmentHeaderV2, curve: ecc.BLS12_381}
	if binary.BigEndian.Uint32(head[4:]) == CompactAssignmentVersion {
		h.size = compactAssignmentHeader
	}
	if len(head) < h.size {
		return h, fmt.Errorf("is truncated: %d bytes, shorter than the %d-byte header of a compact assignment", size, h.size)
	}
	if h.size == compactAssignmentHeader {
		fid := binary.BigEndian.Uint32(head[24:])
		id, ok := keyfile.CurveOfID(fid)
		if !ok {
			return h, fmt.Errorf("names curve %d, which zkhost does not prove on (%d is BLS12-381, %d BN254)", fid, keyfile.CurveBLS12381, keyfile.CurveBN254)
		}
		if r := binary.BigEndian.Uint32(head[28:]); r != 0 {
			return h, fmt.Errorf("has %d in its reserved field (offset 28), want 0", r)
		}
		h.curve = id
	}
	h.nbWires = uint64(binary.BigEndian.Uint32(head[16:]))
	h.nbOther = uint64(binary.BigEndian.Uint32(head[20:]))
	if h.nbOther > h.nbWires {
		return h, fmt.Errorf("says %d of its %d wires are neither 0 nor 1", h.nbOther, h.nbWires)
	}
	if want := compactAssignmentSize(h.size, h.nbWires, h.nbOther); size != want {
		return h, fmt.Errorf("has %d bytes, want %d for a compact assignment of %d wires, %d of them neither 0 nor 1 (truncated, or trailing bytes)", size, want, h.nbWires, h.nbOther)
	}
	return h, nil
}

// CompactAssignment is a compact wire assignment read for a circuit whose
// scalars are S: its header, size and bitmaps checked
// (ReadCompactAssignment), its values still in their bytes. A compact
// partition takes its bitmaps as they are and its values decoded straight
// into the partition's memory (Values), so a W that arrives packed is never
// unpacked on the host.
type CompactAssignment[S any, PS curve.Scalar[S]] struct {
	// Other marks the wires neither 0 nor 1, Bits the 1s (sdk.CompactLayout).
	Other, Bits []uint64
	NbOther     uint64
	nbWires     int
	values      []byte // NbOther canonical big-endian scalars
	ranks       []uint64
}

// IsCompactAssignment reports whether data is a wire assignment in the
// compact format, of either version.
func IsCompactAssignment(data []byte) bool {
	if !IsAssignment(data) || len(data) < 8 {
		return false
	}
	v := binary.BigEndian.Uint32(data[4:])
	return v == CompactAssignmentVersion || v == compactAssignmentV2
}

// ReadCompactAssignment reads a compact wire assignment for circuit c, whose
// scalars S are its curve's fr.Element: the header and size checks of
// CheckAssignmentHeader (the header's curve must be c's), then the bitmaps
// (the Other bits must number the header's count and no bit may be set past
// the last wire), and wire 0, the constant one, must be 1.
func ReadCompactAssignment[S any, PS curve.Scalar[S]](data []byte, c *Circuit) (*CompactAssignment[S, PS], error) {
	if err := needScalars[S](c, "a compact assignment"); err != nil {
		return nil, err
	}
	if err := CheckAssignmentHeader(data, c); err != nil {
		return nil, err
	}
	if !IsCompactAssignment(data) {
		return nil, fmt.Errorf("is a full wire assignment, not a compact one")
	}
	h, err := readCompactHeader(data[:min(len(data), compactAssignmentHeader)], int64(len(data)))
	if err != nil {
		return nil, err
	}
	a := &CompactAssignment[S, PS]{NbOther: h.nbOther, nbWires: int(h.nbWires)}
	nw := sdk.CompactWords(h.nbWires)
	a.Other, a.Bits = make([]uint64, nw), make([]uint64, nw)
	at := h.size
	for _, words := range [][]uint64{a.Other, a.Bits} {
		for i := range words {
			words[i] = binary.LittleEndian.Uint64(data[at:])
			at += 8
		}
	}
	if err := sdk.CheckCompactBits(h.nbWires, a.Other, a.Bits, a.NbOther); err != nil {
		return nil, err
	}
	a.values = data[at:]
	a.ranks = otherRanks(a.Other)
	switch {
	case a.Other[0]&1 == 1:
		var v S
		if err := PS(&v).SetBytesCanonical(a.values[:scalarBytes]); err != nil {
			return nil, fmt.Errorf("wire 0, the constant one, is not a canonical %s scalar: %v", c.curveTitle(), err)
		}
		if !PS(&v).IsOne() {
			return nil, fmt.Errorf("wire 0, the constant one, is %s, want 1", PS(&v).String())
		}
	case a.Bits[0]&1 == 0:
		return nil, fmt.Errorf("wire 0, the constant one, is 0, want 1")
	}
	return a, nil
}

// Values decodes the NbOther values into dst, in wire order, with up to
// threads goroutines; a value that is not a canonical scalar is an error
// naming its wire.
func (a *CompactAssignment[S, PS]) Values(dst []S, threads int) error {
	if uint64(len(dst)) != a.NbOther {
		return fmt.Errorf("compact assignment: %d values, room for %d", a.NbOther, len(dst))
	}
	bad := firstFailure(len(dst), threads, func(lo, hi int) (int, error) {
		for r := lo; r < hi; r++ {
			if err := PS(&dst[r]).SetBytesCanonical(a.values[r*scalarBytes : (r+1)*scalarBytes]); err != nil {
				return r, err
			}
		}
		return -1, nil
	})
	if bad.index >= 0 {
		return fmt.Errorf("wire %d is not a canonical %s scalar: %v", a.otherWire(uint64(bad.index)), curve.Title(curve.ScalarIDOf[S]()), bad.err)
	}
	return nil
}

// otherWire is the wire of the r-th value.
func (a *CompactAssignment[S, PS]) otherWire(r uint64) int {
	for wd, o := range a.Other {
		if a.ranks[wd+1] > r {
			for k := r - a.ranks[wd]; k > 0; k-- {
				o &= o - 1
			}
			return wd*64 + bits.TrailingZeros64(o)
		}
	}
	return -1
}

// Witness returns the gnark full witness the assignment holds (its public
// and secret inputs, the wires after the constant one), decoding those wires
// alone: what a proof is verified against.
func (a *CompactAssignment[S, PS]) Witness(c *Circuit) (witness.Witness, error) {
	inputs := make([]S, c.NbPublic+c.NbSecret)
	if err := a.expand(inputs, 1); err != nil {
		return nil, err
	}
	return inputsWitness[S, PS](c, inputs[1:])
}

// expand writes the first len(W) wires into W with up to threads goroutines.
func (a *CompactAssignment[S, PS]) expand(W []S, threads int) error {
	if len(W) > a.nbWires {
		return fmt.Errorf("compact assignment: %d wires, asked for %d", a.nbWires, len(W))
	}
	nw := int(sdk.CompactWords(uint64(len(W))))
	bad := firstFailure(nw, threads, func(lo, hi int) (int, error) {
		if lo >= hi {
			return -1, nil
		}
		r := a.ranks[lo]
		for wd := lo; wd < hi; wd++ {
			o, b := a.Other[wd], a.Bits[wd]
			for j := range min(64, len(W)-wd*64) {
				i := wd*64 + j
				switch {
				case o>>j&1 == 1:
					if err := PS(&W[i]).SetBytesCanonical(a.values[r*scalarBytes : (r+1)*scalarBytes]); err != nil {
						return i, err
					}
					r++
				case b>>j&1 == 1:
					PS(&W[i]).SetOne()
				default:
					PS(&W[i]).SetZero()
				}
			}
		}
		return -1, nil
	})
	if bad.index >= 0 {
		return fmt.Errorf("wire %d is not a canonical %s scalar: %v", bad.index, curve.Title(curve.ScalarIDOf[S]()), bad.err)
	}
	return nil
}

// needScalars refuses, naming what, vectors of scalars S for circuit c of
// another curve: both curves' scalars are four words, so nothing else would
// catch one for the other.
func needScalars[S any](c *Circuit, what string) error {
	if id := curve.ScalarIDOf[S](); sdk.Curve(curve.Name(id)) != c.Curve {
		return fmt.Errorf("circuit %s: %s of %s scalars for a %s circuit", c.Name, what, curve.Title(id), c.curveTitle())
	}
	return nil
}
