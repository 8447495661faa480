package sdk

import (
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/curve"
)

// PartitionFormat says what a partition file holds.
type PartitionFormat uint32

const (
	// FormatFull is W, A and B as field elements (PartitionLayout): what every
	// backend proves from.
	FormatFull PartitionFormat = 0
	// FormatCompactW is W alone, packed (CompactLayout): two bitmaps and the
	// values that are neither 0 nor 1. Only a backend that said so in
	// Description.CompactW gets it, and only for a key it loaded with the
	// circuit's constraints (KeyRef.Constraints, KeyInfo.CompactW): it
	// evaluates A and B itself.
	FormatCompactW PartitionFormat = 1
)

// String names the format. Deliberately parallel to keyfile.HForm's and
// plugins.Kind's String: each enum names its own values in a switch, the plain
// Go for it, and a shared helper would only move the names into a table.
func (f PartitionFormat) String() string {
	switch f {
	case FormatFull:
		return "full"
	case FormatCompactW:
		return "compact-w"
	}
	return fmt.Sprintf("format(%d)", uint32(f))
}

// CompactWords is the number of 64-bit words of each bitmap of a compact W
// of nbWires wires.
func CompactWords(nbWires uint64) uint64 { return (nbWires + 63) / 64 }

// CompactLayout returns the byte offsets of a compact W's sections and the
// file's size: the Other bitmap, the Bits bitmap (CompactWords words each)
// and the values (nbOther elements), each on a PartitionAlign boundary.
//
// Wire i is bit i%64 of word i/64 of each bitmap. W[i] is values[r], where r
// is the number of Other bits set below i, when Other's bit i is set; else 1
// when Bits' bit i is set; else 0. A real witness is mostly 0s and 1s (the
// share for sha256 is in BENCHMARKS.md), so this is about two bits a wire
// where the full format is 32 bytes a wire and 64 a constraint.
func CompactLayout(nbWires, nbOther uint64) (otherOff, bitsOff, valuesOff, size uint64) {
	words := CompactWords(nbWires) * 8
	otherOff = 0
	bitsOff = alignUp(otherOff + words)
	valuesOff = alignUp(bitsOff + words)
	size = alignUp(valuesOff + nbOther*ElementSize)
	return otherOff, bitsOff, valuesOff, size
}

// one is BLS12-381's 1 in Montgomery form.
var one = oneOf[fr.Element]()

// oneOf is the 1 of the field whose scalars are S, in Montgomery form: it
// differs per curve, so a W's 1s are told apart with the curve's own.
func oneOf[S any, PS curve.Scalar[S]]() S {
	var e S
	PS(&e).SetOne()
	return e
}

// compactPiece is how many words of W's bitmaps one goroutine packs or counts
// at a time (2^14 words, 2^20 wires).
const compactPiece = 1 << 14

// CountOther returns how many values of w (scalars of either curve) are
// neither 0 nor 1, with up to threads goroutines: the nbOther that sizes w's
// compact file.
func CountOther[S ~[4]uint64, PS curve.Scalar[S]](w []S, threads int) uint64 {
	one := oneOf[S, PS]()
	words := int(CompactWords(uint64(len(w))))
	pieces := (words + compactPiece - 1) / compactPiece
	counts := make([]uint64, pieces)
	forPieces(pieces, threads, func(p int) {
		lo, hi := p*compactPiece*64, min(len(w), (p+1)*compactPiece*64)
		var n uint64
		for i := lo; i < hi; i++ {
			if w[i] != (S{}) && w[i] != one {
				n++
			}
		}
		counts[p] = n
	})
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n
}

// PackW packs w (scalars of either curve) into other, bits (CompactWords
// words each) and values (at least CountOther(w) elements) as CompactLayout
// describes, with up to threads goroutines, and returns how many values it
// wrote: PackBitsOf, then GatherOther.
func PackW[S ~[4]uint64, PS curve.Scalar[S]](w []S, other, bits []uint64, values []S, threads int) (uint64, error) {
	n, err := PackBitsOf[S, PS](w, other, bits, threads)
	if err != nil {
		return 0, err
	}
	if uint64(len(values)) < n {
		return 0, Errorf(ErrInternal, "pack W: %d values are neither 0 nor 1, room for %d", n, len(values))
	}
	return n, GatherOther(w, other, values[:n], threads)
}

// PackBits fills the Other and Bits bitmaps of w (CompactWords words each)
// with up to threads goroutines, and returns how many values are neither 0
// nor 1: the one pass over W that sizes a compact file (GatherOther then
// reads only those values).
func PackBits(w []fr.Element, other, bits []uint64, threads int) (uint64, error) {
	return PackBitsOf(w, other, bits, threads)
}

// PackBitsOf is PackBits for the scalars S of either curve: a 1 is S's
// field's, in Montgomery form as w's elements hold it.
func PackBitsOf[S ~[4]uint64, PS curve.Scalar[S]](w []S, other, bits []uint64, threads int) (uint64, error) {
	// The loop runs on w's words, not on S: a loop generic over S measured
	// slower (BENCHMARKS.md, "Small figures behind the BN254 solver").
	return packWords(unsafe.Slice((*[4]uint64)(unsafe.Pointer(unsafe.SliceData(w))), len(w)), [4]uint64(oneOf[S, PS]()), other, bits, threads)
}

// packWords is PackBitsOf on the words of the scalars.
func packWords(w [][4]uint64, one [4]uint64, other, bits []uint64, threads int) (uint64, error) {
	words := int(CompactWords(uint64(len(w))))
	if len(other) != words || len(bits) != words {
		return 0, Errorf(ErrInternal, "pack W: %d wires need %d words per bitmap, got %d and %d", len(w), words, len(other), len(bits))
	}
	pieces := (words + compactPiece - 1) / compactPiece
	counts := make([]uint64, pieces)
	forPieces(pieces, threads, func(p int) {
		var n uint64
		for wd := p * compactPiece; wd < min(words, (p+1)*compactPiece); wd++ {
			var o, b uint64
			for i, j := wd*64, 0; i < min(len(w), wd*64+64); i, j = i+1, j+1 {
				// Without branches: a witness's 0s and 1s come in no order
				// a branch predictor could learn.
				v := &w[i]
				isOne := zeroBit(v[0] ^ one[0] | v[1] ^ one[1] | v[2] ^ one[2] | v[3] ^ one[3])
				isZero := zeroBit(v[0] | v[1] | v[2] | v[3])
				b |= isOne << j
				o |= (1 ^ isOne ^ isZero) << j
			}
			other[wd], bits[wd] = o, b
			n += uint64(popcount(o))
		}
		counts[p] = n
	})
	var total uint64
	for _, c := range counts {
		total += c
	}
	return total, nil
}

// PackInts is PackBits for a W whose values are known as int32s, as a solver
// that keeps small values as integers knows them (any value but 0 and 1,
// whatever it stands for, is an Other bit): one pass over 4 bytes a wire
// rather than 32. It returns how many values are neither 0 nor 1.
func PackInts(ints []int32, other, bits []uint64) (uint64, error) {
	words := int(CompactWords(uint64(len(ints))))
	if len(other) != words || len(bits) != words {
		return 0, Errorf(ErrInternal, "pack W: %d wires need %d words per bitmap, got %d and %d", len(ints), words, len(other), len(bits))
	}
	var n uint64
	for wd := range other {
		var o, b uint64
		lo := wd * 64
		for j, v := range ints[lo:min(len(ints), lo+64)] {
			// Without branches, as in PackBits.
			x := uint64(uint32(v))
			isOne := zeroBit(x ^ 1)
			b |= isOne << j
			o |= (1 ^ isOne ^ zeroBit(x)) << j
		}
		other[wd], bits[wd] = o, b
		n += uint64(popcount(o))
	}
	return n, nil
}

// GatherOther writes the values of w that other marks into values, in wire
// order, with up to threads goroutines: each piece of the bitmap from the
// offset the set bits before it give. values must hold exactly other's set
// bits. S is either curve's scalar: the values are copied, not read.
func GatherOther[S ~[4]uint64](w []S, other []uint64, values []S, threads int) error {
	words := len(other)
	pieces := (words + compactPiece - 1) / compactPiece
	offsets := make([]uint64, pieces+1)
	for p := range pieces {
		var n uint64
		for _, o := range other[p*compactPiece : min(words, (p+1)*compactPiece)] {
			n += uint64(popcount(o))
		}
		offsets[p+1] = offsets[p] + n
	}
	if offsets[pieces] != uint64(len(values)) {
		return Errorf(ErrInternal, "gather W's values: the bitmap marks %d, room for %d", offsets[pieces], len(values))
	}
	forPieces(pieces, threads, func(p int) {
		at := offsets[p]
		for wd := p * compactPiece; wd < min(words, (p+1)*compactPiece); wd++ {
			for o := other[wd]; o != 0; o &= o - 1 {
				values[at] = w[wd*64+trailingZeros(o)]
				at++
			}
		}
	})
	return nil
}

// ExpandW is PackW's inverse: it writes the nbWires = len(w) values other,
// bits and values describe into w, a Bits wire as the 1 of w's field (S: either
// curve's scalar). It checks what a device kernel would trust: the bitmaps'
// lengths, that the Other bits number exactly len(values), and that no bit is
// set beyond the last wire.
func ExpandW[S ~[4]uint64, PS curve.Scalar[S]](other, bits []uint64, values []S, w []S) error {
	one := oneOf[S, PS]()
	words := CompactWords(uint64(len(w)))
	if uint64(len(other)) != words || uint64(len(bits)) != words {
		return Errorf(ErrInvalidArgument, "compact W: %d wires need %d words per bitmap, got %d and %d", len(w), words, len(other), len(bits))
	}
	if err := CheckCompactBits(uint64(len(w)), other, bits, uint64(len(values))); err != nil {
		return err
	}
	at := 0
	for i := range w {
		wd, bit := i/64, uint(i%64)
		switch {
		case other[wd]>>bit&1 == 1:
			w[i] = values[at]
			at++
		case bits[wd]>>bit&1 == 1:
			w[i] = one
		default:
			w[i] = S{}
		}
	}
	return nil
}

// CheckCompactBits checks that other has exactly nbOther bits set and that
// neither bitmap has a bit set beyond wire nbWires-1: what a reader of a
// compact W trusts before it indexes the values by the bitmaps.
func CheckCompactBits(nbWires uint64, other, bits []uint64, nbOther uint64) error {
	var n uint64
	for _, o := range other {
		n += uint64(popcount(o))
	}
	if n != nbOther {
		return Errorf(ErrInvalidArgument, "compact W: %d wires are marked neither 0 nor 1, the handle says %d", n, nbOther)
	}
	if tail := nbWires % 64; tail != 0 && len(other) > 0 {
		last := len(other) - 1
		if other[last]>>tail != 0 || bits[last]>>tail != 0 {
			return Errorf(ErrInvalidArgument, "compact W: a bit is set beyond wire %d", nbWires-1)
		}
	}
	return nil
}

func popcount(x uint64) int { return bits.OnesCount64(x) }

// zeroBit is 1 when x is 0, else 0, computed without a branch.
func zeroBit(x uint64) uint64    { return 1 ^ (x|-x)>>63 }
func trailingZeros(x uint64) int { return bits.TrailingZeros64(x) }

// forPieces runs f(0..pieces-1) on up to threads goroutines.
func forPieces(pieces, threads int, f func(p int)) {
	threads = max(1, min(threads, pieces))
	if threads == 1 {
		for p := range pieces {
			f(p)
		}
		return
	}
	var wg sync.WaitGroup
	for t := range threads {
		wg.Go(func() {
			for p := t; p < pieces; p += threads {
				f(p)
			}
		})
	}
	wg.Wait()
}

// words views b (a whole number of 8-byte words, 8-byte aligned) as uint64s.
func words(b []byte) []uint64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}
