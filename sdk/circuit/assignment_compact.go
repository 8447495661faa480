package circuit

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk"
)

// A compact wire assignment (version 2) is a wire assignment packed for the
// witnesses real circuits have, whose wires are mostly 0 or 1: two bitmaps
// and the values that are neither. It is what a synthesis host ships to the
// host that proves (docs/assignment.md; the same bitmaps as a compact
// partition, sdk.CompactLayout):
//
//	offset      size     field
//	0           4        magic "ZKWA"
//	4           4        version, big-endian uint32: 2
//	8           4        public wires, including the constant-one wire
//	12          4        secret wires
//	16          4        all wires, n
//	20          4        k, the wires whose value is neither 0 nor 1
//	24          8·m      the Other bitmap: m = ceil(n/64) little-endian uint64
//	                     words; bit i%64 of word i/64 is set when wire i is
//	                     neither 0 nor 1
//	24+8·m      8·m      the Bits bitmap: bit i set when wire i is 1
//	24+16·m     32·k     the k values of the Other wires, in wire order, each a
//	                     canonical big-endian BLS12-381 scalar
//
// Wire i is the next value when its Other bit is set, else 1 when its Bits
// bit is set, else 0. No bit is set beyond wire n-1.
const (
	CompactAssignmentVersion = 2
	compactAssignmentHeader  = 24
)

// compactAssignmentSize is the size of a compact assignment of nbWires wires,
// nbOther of them neither 0 nor 1.
func compactAssignmentSize(nbWires, nbOther uint64) int64 {
	return compactAssignmentHeader + int64(16*sdk.CompactWords(nbWires)+nbOther*fr.Bytes)
}

// MarshalCompactAssignment encodes the wire values W of a circuit with
// nbPublic public wires (the constant-one wire included) and nbSecret secret
// wires as a compact wire assignment, with up to threads goroutines.
func MarshalCompactAssignment(W []fr.Element, nbPublic, nbSecret, threads int) ([]byte, error) {
	nw := sdk.CompactWords(uint64(len(W)))
	other, ones := make([]uint64, nw), make([]uint64, nw)
	k, err := sdk.PackBits(W, other, ones, max(1, threads))
	if err != nil {
		return nil, err
	}
	return MarshalCompactBits(W, other, ones, k, nbPublic, nbSecret, threads)
}

// MarshalCompactBits is MarshalCompactAssignment for a W whose bitmaps are
// packed already (as SynthesizeInputCompact returns them): other marks the
// k values neither 0 nor 1, ones the 1s.
func MarshalCompactBits(W []fr.Element, other, ones []uint64, k uint64, nbPublic, nbSecret, threads int) ([]byte, error) {
	nw := sdk.CompactWords(uint64(len(W)))
	if uint64(len(other)) != nw || uint64(len(ones)) != nw {
		return nil, fmt.Errorf("compact assignment: %d wires need %d words per bitmap, got %d and %d", len(W), nw, len(other), len(ones))
	}
	if err := sdk.CheckCompactBits(uint64(len(W)), other, ones, k); err != nil {
		return nil, err
	}
	b := make([]byte, compactAssignmentSize(uint64(len(W)), k))
	copy(b, AssignmentMagic)
	binary.BigEndian.PutUint32(b[4:], CompactAssignmentVersion)
	binary.BigEndian.PutUint32(b[8:], uint32(nbPublic))
	binary.BigEndian.PutUint32(b[12:], uint32(nbSecret))
	binary.BigEndian.PutUint32(b[16:], uint32(len(W)))
	binary.BigEndian.PutUint32(b[20:], uint32(k))
	at := compactAssignmentHeader
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
				v := W[wd*64+bits.TrailingZeros64(o)].Bytes()
				copy(values[r*fr.Bytes:], v[:])
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

// checkCompactAssignment checks a compact assignment's counts and size, its
// header already read: nbWires wires, nbOther of them neither 0 nor 1.
func checkCompactAssignment(head []byte, size int64) error {
	if len(head) < compactAssignmentHeader {
		return fmt.Errorf("is truncated: %d bytes, shorter than the %d-byte header of a compact assignment", size, compactAssignmentHeader)
	}
	nbWires := uint64(binary.BigEndian.Uint32(head[16:]))
	nbOther := uint64(binary.BigEndian.Uint32(head[20:]))
	if nbOther > nbWires {
		return fmt.Errorf("says %d of its %d wires are neither 0 nor 1", nbOther, nbWires)
	}
	if want := compactAssignmentSize(nbWires, nbOther); size != want {
		return fmt.Errorf("has %d bytes, want %d for a compact assignment of %d wires, %d of them neither 0 nor 1 (truncated, or trailing bytes)", size, want, nbWires, nbOther)
	}
	return nil
}

// CompactAssignment is a compact wire assignment read for a circuit: its
// header, size and bitmaps checked (ReadCompactAssignment), its values still
// in their bytes. A compact partition takes its bitmaps as they are and its
// values decoded straight into the partition's memory (Values), so a W that
// arrives packed is never unpacked on the host.
type CompactAssignment struct {
	// Other marks the wires neither 0 nor 1, Bits the 1s (sdk.CompactLayout).
	Other, Bits []uint64
	NbOther     uint64
	nbWires     int
	values      []byte // NbOther canonical big-endian scalars
	ranks       []uint64
}

// IsCompactAssignment reports whether data is a wire assignment in the
// compact format.
func IsCompactAssignment(data []byte) bool {
	return IsAssignment(data) && len(data) >= 8 && binary.BigEndian.Uint32(data[4:]) == CompactAssignmentVersion
}

// ReadCompactAssignment reads a compact wire assignment for circuit c: the
// header and size checks of CheckAssignmentHeader, then the bitmaps (the
// Other bits must number the header's count and no bit may be set past the
// last wire), and wire 0, the constant one, must be 1.
func ReadCompactAssignment(data []byte, c *Circuit) (*CompactAssignment, error) {
	if err := c.needBLS12381("ReadCompactAssignment"); err != nil {
		return nil, err
	}
	if err := CheckAssignmentHeader(data, c); err != nil {
		return nil, err
	}
	if !IsCompactAssignment(data) {
		return nil, fmt.Errorf("is a full wire assignment, not a compact one")
	}
	nbWires := uint64(binary.BigEndian.Uint32(data[16:]))
	a := &CompactAssignment{NbOther: uint64(binary.BigEndian.Uint32(data[20:])), nbWires: int(nbWires)}
	nw := sdk.CompactWords(nbWires)
	a.Other, a.Bits = make([]uint64, nw), make([]uint64, nw)
	at := compactAssignmentHeader
	for _, words := range [][]uint64{a.Other, a.Bits} {
		for i := range words {
			words[i] = binary.LittleEndian.Uint64(data[at:])
			at += 8
		}
	}
	if err := sdk.CheckCompactBits(nbWires, a.Other, a.Bits, a.NbOther); err != nil {
		return nil, err
	}
	a.values = data[at:]
	a.ranks = otherRanks(a.Other)
	switch {
	case a.Other[0]&1 == 1:
		var v fr.Element
		if err := v.SetBytesCanonical(a.values[:fr.Bytes]); err != nil || !v.IsOne() {
			return nil, fmt.Errorf("wire 0, the constant one, is %s, want 1", v.String())
		}
	case a.Bits[0]&1 == 0:
		return nil, fmt.Errorf("wire 0, the constant one, is 0, want 1")
	}
	return a, nil
}

// Values decodes the NbOther values into dst, in wire order, with up to
// threads goroutines; a value that is not a canonical scalar is an error
// naming its wire.
func (a *CompactAssignment) Values(dst []fr.Element, threads int) error {
	if uint64(len(dst)) != a.NbOther {
		return fmt.Errorf("compact assignment: %d values, room for %d", a.NbOther, len(dst))
	}
	bad := firstFailure(len(dst), threads, func(lo, hi int) (int, error) {
		for r := lo; r < hi; r++ {
			if err := dst[r].SetBytesCanonical(a.values[r*fr.Bytes : (r+1)*fr.Bytes]); err != nil {
				return r, err
			}
		}
		return -1, nil
	})
	if bad.index >= 0 {
		return fmt.Errorf("wire %d is not a canonical BLS12-381 scalar: %v", a.otherWire(uint64(bad.index)), bad.err)
	}
	return nil
}

// otherWire is the wire of the r-th value.
func (a *CompactAssignment) otherWire(r uint64) int {
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
func (a *CompactAssignment) Witness(c *Circuit) (witness.Witness, error) {
	inputs := make([]fr.Element, c.NbPublic+c.NbSecret)
	if err := a.expand(inputs, 1); err != nil {
		return nil, err
	}
	return inputsWitness(c, inputs[1:])
}

// expand writes the first len(W) wires into W with up to threads goroutines.
func (a *CompactAssignment) expand(W []fr.Element, threads int) error {
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
					if err := W[i].SetBytesCanonical(a.values[r*fr.Bytes : (r+1)*fr.Bytes]); err != nil {
						return i, err
					}
					r++
				case b>>j&1 == 1:
					W[i].SetOne()
				default:
					W[i].SetZero()
				}
			}
		}
		return -1, nil
	})
	if bad.index >= 0 {
		return fmt.Errorf("wire %d is not a canonical BLS12-381 scalar: %v", bad.index, bad.err)
	}
	return nil
}

// parseCompactAssignmentInto decodes a compact assignment into W (c.NbWires
// values) with up to threads goroutines.
func parseCompactAssignmentInto(data []byte, c *Circuit, threads int, W []fr.Element) error {
	a, err := ReadCompactAssignment(data, c)
	if err != nil {
		return err
	}
	return a.expand(W, threads)
}
