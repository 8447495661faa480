package circuit

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// compactOf returns the compact assignment of testSpecs[i]'s first witness,
// the circuit, and the solution's W.
func compactOf(t *testing.T, i int) ([]byte, *Circuit, []fr.Element) {
	t.Helper()
	c := load(t, sharedKeys(t), spec(t, i).ID())
	w, err := spec(t, i).Witness(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, sol := solvedAssignment(t, c.CCS, w)
	data, err := MarshalCompactAssignment(sol.W, c.NbPublic, c.NbSecret, 4)
	if err != nil {
		t.Fatal(err)
	}
	return data, c, sol.W
}

// TestCompactAssignmentRoundTrip: a compact assignment decodes to the
// solver's W word for word, on one thread or many, in every circuit; it is
// smaller than the full one by what its 0s and 1s save; and the full and
// compact assignments of one W give the same A and B.
func TestCompactAssignmentRoundTrip(t *testing.T) {
	manyChunks(t)
	for i := range testSpecs {
		data, c, want := compactOf(t, i)
		full := MarshalAssignment(want, c.NbPublic, c.NbSecret)
		var bitsOnly int
		for _, v := range want {
			if v.IsZero() || v.IsOne() {
				bitsOnly++
			}
		}
		if got := len(data); int64(got) != compactAssignmentSize(uint64(len(want)), uint64(len(want)-bitsOnly)) {
			t.Errorf("%s: %d bytes for %d wires, %d of them 0 or 1", c.Name, got, len(want), bitsOnly)
		}
		if err := CheckInput(data, true, c); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if lo, hi := InputSizeRange(c, true); int64(len(data)) < lo || int64(len(data)) > hi {
			t.Errorf("%s: %d bytes outside the declared range %d to %d", c.Name, len(data), lo, hi)
		}
		for _, threads := range []int{1, 4} {
			W, err := ParseAssignment(data, c, threads)
			if err != nil {
				t.Fatalf("%s, %d threads: %v", c.Name, threads, err)
			}
			if !slices.Equal(W, want) {
				t.Fatalf("%s, %d threads: decoded W differs from the solver's", c.Name, threads)
			}
			into := make([]fr.Element, c.NbWires)
			if _, err := SynthesizeInputInto(c, data, threads, into, nil, nil); err != nil || !slices.Equal(into, want) {
				t.Fatalf("%s, %d threads: W alone into a vector: %v", c.Name, threads, err)
			}
		}
		_, A1, B1, _, err := SynthesizeInput(c, full, 2)
		if err != nil {
			t.Fatal(err)
		}
		_, A2, B2, _, err := SynthesizeInput(c, data, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(A1, A2) || !slices.Equal(B1, B2) {
			t.Errorf("%s: A and B differ between the full and the compact assignment", c.Name)
		}
	}
}

// TestCompactAssignmentRejects: a compact assignment that is malformed is
// refused naming what is wrong; one whose values are well formed but wrong
// is refused by the constraint it breaks.
func TestCompactAssignmentRejects(t *testing.T) {
	data, c, W := compactOf(t, 1) // merkle: its path bits are 0 and 1
	nw := int((c.NbWires + 63) / 64)
	otherAt, bitsAt := compactAssignmentHeader, compactAssignmentHeader+8*nw
	valuesAt := compactAssignmentHeader + 16*nw
	edit := func(f func(b []byte) []byte) []byte { return f(slices.Clone(data)) }
	word := func(b []byte, at int) uint64 { return binary.LittleEndian.Uint64(b[at:]) }
	setWord := func(b []byte, at int, v uint64) { binary.LittleEndian.PutUint64(b[at:], v) }
	lastBit := uint(c.NbWires % 64)
	if lastBit == 0 {
		t.Fatalf("the test needs a wire count that is not a multiple of 64: %d", c.NbWires)
	}
	oneWire := -1 // an internal wire whose value is 1
	for i := c.NbPublic + c.NbSecret; i < len(W); i++ {
		if W[i].IsOne() {
			oneWire = i
			break
		}
	}
	if oneWire < 0 {
		t.Fatal("the test circuit has no internal wire equal to 1")
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"header only in part", data[:22], "is truncated: 22 bytes, shorter than the 24-byte header"},
		{"more values than wires", edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[20:], uint32(c.NbWires+1)); return b }), "neither 0 nor 1"},
		{"truncated", data[:len(data)-1], "truncated, or trailing bytes"},
		{"trailing bytes", append(slices.Clone(data), 0), "truncated, or trailing bytes"},
		{"a bit past the last wire", edit(func(b []byte) []byte {
			at := bitsAt + 8*(nw-1)
			setWord(b, at, word(b, at)|1<<63)
			return b
		}), "a bit is set beyond wire"},
		{"Other bits not the header's count", edit(func(b []byte) []byte {
			at := otherAt + 8*(oneWire/64)
			setWord(b, at, word(b, at)|1<<(oneWire%64))
			return b
		}), "marked neither 0 nor 1, the handle says"},
		{"a value past the modulus", edit(func(b []byte) []byte {
			copy(b[valuesAt:], slices.Repeat([]byte{0xff}, fr.Bytes))
			return b
		}), "is not a canonical BLS12-381 scalar"},
		{"the constant wire not one", edit(func(b []byte) []byte {
			// wire 0 is 1: its Bits bit is set (1 is not an Other value)
			setWord(b, bitsAt, word(b, bitsAt)&^1)
			return b
		}), "wire 0, the constant one, is 0, want 1"},
	} {
		_, err := ParseAssignment(tc.data, c, 2)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// Well formed, but a wire that is 1 reads 0: a constraint using it
	// breaks (not always the first: a boolean constraint holds for 0 too),
	// and it is the one named.
	bad := edit(func(b []byte) []byte {
		at := bitsAt + 8*(oneWire/64)
		setWord(b, at, word(b, at)&^(1<<(oneWire%64)))
		return b
	})
	got, err := ParseAssignment(bad, c, 2)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Evaluate(c, got, 2)
	var ue *UnsatisfiedError
	if !errors.As(err, &ue) {
		t.Fatalf("wire %d flipped to 0: %v, want a constraint named", oneWire, err)
	}
	r := c.CCS.GetR1Cs()[ue.Constraint]
	mentions := false
	for _, e := range append(append(slices.Clone(r.L), r.R...), r.O...) {
		mentions = mentions || e.WireID() == oneWire && e.CoeffID() != 0
	}
	if !mentions {
		t.Errorf("wire %d flipped to 0: constraint %d named, which does not use the wire", oneWire, ue.Constraint)
	}
}

// TestInputSizeRange: a streamed input's declared size is held to the
// circuit's: exactly for a witness, within the compact format's bounds for
// an assignment, which hold the full format's size.
func TestInputSizeRange(t *testing.T) {
	c := load(t, sharedKeys(t), spec(t, 0).ID())
	if lo, hi := InputSizeRange(c, false); lo != InputSize(c, false) || hi != lo {
		t.Errorf("a witness: %d to %d, want exactly %d", lo, hi, InputSize(c, false))
	}
	lo, hi := InputSizeRange(c, true)
	if full := InputSize(c, true); full < lo || full > hi {
		t.Errorf("a full assignment's %d bytes outside %d to %d", full, lo, hi)
	}
	if want := compactAssignmentSize(uint64(c.NbWires), 0); lo != want {
		t.Errorf("lowest %d, want %d", lo, want)
	}
	if want := compactAssignmentSize(uint64(c.NbWires), uint64(c.NbWires)); hi != want {
		t.Errorf("highest %d, want %d", hi, want)
	}
}
