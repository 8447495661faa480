package circuit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

var (
	bn254KeysOnce sync.Once
	bn254KeysDir  string
	bn254KeysErr  error
)

// keysOn returns the directory holding the test circuits' keys on curve id:
// sharedKeys for BLS12-381, and for BN254 a set made once the same way.
func keysOn(t *testing.T, id ecc.ID) string {
	t.Helper()
	if id == ecc.BLS12_381 {
		return sharedKeys(t)
	}
	bn254KeysOnce.Do(func() {
		if bn254KeysDir, bn254KeysErr = os.MkdirTemp("", "zkhost-circuit-test-bn254-"); bn254KeysErr != nil {
			return
		}
		for _, ts := range testSpecs {
			s, err := circuits.Lookup(ts.name, ts.params)
			if err == nil {
				s, err = s.On(ecc.BN254)
			}
			if err == nil {
				err = Keygen(s, bn254KeysDir)
			}
			if err != nil {
				bn254KeysErr = err
				return
			}
		}
	})
	if bn254KeysErr != nil {
		t.Fatal(bn254KeysErr)
	}
	return bn254KeysDir
}

// specOn is test circuit i on curve id.
func specOn(t *testing.T, id ecc.ID, i int) circuits.Spec {
	t.Helper()
	s, err := spec(t, i).On(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loadOn loads test circuit i keyed on curve id.
func loadOn(t *testing.T, id ecc.ID, i int) *Circuit {
	t.Helper()
	return load(t, keysOn(t, id), specOn(t, id, i).ID())
}

// solvedW returns the wires of c (test circuit i on c's curve, its scalars
// S) solved by gnark from the witness of its partition 0.
func solvedW[S any, PS curve.Scalar[S]](t *testing.T, c *Circuit, i int) []S {
	t.Helper()
	id := curve.ScalarIDOf[S]()
	w, err := specOn(t, id, i).Witness(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	full, err := c.GnarkAssignments([][]byte{b})
	if err != nil {
		t.Fatal(err)
	}
	W := make([]S, c.NbWires)
	if err := parseAssignmentInto[S, PS](full[0], c, 1, W); err != nil {
		t.Fatal(err)
	}
	return W
}

// forCurves runs a test on test circuits specs keyed on each curve, with that
// curve's scalars (bls for BLS12-381, bn for BN254: one generic test
// instantiated twice).
func forCurves(t *testing.T, specs []int, bls, bn func(t *testing.T, c *Circuit, i int)) {
	for _, tc := range []struct {
		id  ecc.ID
		run func(t *testing.T, c *Circuit, i int)
	}{{ecc.BLS12_381, bls}, {ecc.BN254, bn}} {
		for _, i := range specs {
			t.Run(fmt.Sprintf("%s/%s", curve.Name(tc.id), testSpecs[i].name), func(t *testing.T) {
				tc.run(t, loadOn(t, tc.id, i), i)
			})
		}
	}
}

// TestCompactAssignmentRoundTrip: on either curve, a compact assignment
// decodes to the solver's W word for word on one thread or many, is smaller
// than the full one by what its 0s and 1s save, gives the same A and B as
// the full assignment of the same W, and its values and inputs decode on
// their own (what a compact partition takes) to W's.
func TestCompactAssignmentRoundTrip(t *testing.T) {
	manyChunks(t)
	forCurves(t, []int{0, 1}, testCompactRoundTrip[fr.Element], testCompactRoundTrip[bnfr.Element])
}

func testCompactRoundTrip[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T, c *Circuit, i int) {
	want := solvedW[S, PS](t, c, i)
	data, err := MarshalCompactAssignment[S, PS](want, c.NbPublic, c.NbSecret, 4)
	if err != nil {
		t.Fatal(err)
	}
	var bitsOnly int
	for k := range want {
		if PS(&want[k]).IsZero() || PS(&want[k]).IsOne() {
			bitsOnly++
		}
	}
	// The header's version is checked by TestCompactAssignmentVersions; its
	// size here is the one of the version written.
	if got := len(data); int64(got) != compactAssignmentSize(compactHeaderOf(t, data), uint64(len(want)), uint64(len(want)-bitsOnly)) {
		t.Errorf("%d bytes for %d wires, %d of them 0 or 1", got, len(want), bitsOnly)
	}
	if err := CheckInput(data, true, c); err != nil {
		t.Fatal(err)
	}
	if lo, hi := InputSizeRange(c, true); int64(len(data)) < lo || int64(len(data)) > hi {
		t.Errorf("%d bytes outside the declared range %d to %d", len(data), lo, hi)
	}
	for _, threads := range []int{1, 4} {
		W := make([]S, c.NbWires)
		if err := parseAssignmentInto[S, PS](data, c, threads, W); err != nil {
			t.Fatalf("%d threads: %v", threads, err)
		}
		if !slices.Equal(W, want) {
			t.Fatalf("%d threads: decoded W differs from the solver's", threads)
		}
	}
	// The host's evaluation of a full partition: the same A and B from the
	// compact assignment as from the full one, for any curve's circuit.
	full := MarshalAssignment[S, PS](want, c.NbPublic, c.NbSecret)
	var ab [2][2][]byte
	for k, in := range [][]byte{full, data} {
		w, a, b := refprover.ScalarMemory(c.NbWires), refprover.ScalarMemory(c.NbConstraints), refprover.ScalarMemory(c.NbConstraints)
		if _, err := SynthesizeInputRaw(c, in, 2, w, a, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w, refprover.ScalarBytes(want)) {
			t.Fatalf("input %d: W differs from the solver's", k)
		}
		ab[k] = [2][]byte{a, b}
	}
	if !bytes.Equal(ab[0][0], ab[1][0]) || !bytes.Equal(ab[0][1], ab[1][1]) {
		t.Error("A and B differ between the full and the compact assignment")
	}
	A, B, err := Evaluate[S, PS](c, want, 2)
	if err != nil || !bytes.Equal(refprover.ScalarBytes(A), ab[0][0]) || !bytes.Equal(refprover.ScalarBytes(B), ab[0][1]) {
		t.Errorf("Evaluate: %v, or A and B differ from the synthesized partition's", err)
	}
	// Read without unpacking: the bitmaps as W packs, the values and the
	// inputs as W holds them.
	a, err := ReadCompactAssignment[S, PS](data, c)
	if err != nil {
		t.Fatal(err)
	}
	words := sdk.CompactWords(uint64(c.NbWires))
	other, ones := make([]uint64, words), make([]uint64, words)
	n, err := sdk.PackBitsOf[S, PS](want, other, ones, 1)
	if err != nil || n != a.NbOther || !slices.Equal(other, a.Other) || !slices.Equal(ones, a.Bits) {
		t.Fatalf("bitmaps differ from W's packed (%v)", err)
	}
	values, wantValues := make([]S, n), make([]S, n)
	if err := sdk.GatherOther(want, other, wantValues, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.Values(values, 4); err != nil || !slices.Equal(values, wantValues) {
		t.Fatalf("values: %v, or not W's", err)
	}
	got, err := a.Witness(c)
	if err != nil {
		t.Fatal(err)
	}
	wantWit, err := AssignmentWitness[S, PS](c, want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(publicBytes(t, got), publicBytes(t, wantWit)) {
		t.Error("the assignment's public inputs differ from W's")
	}
}

// publicBytes is the public part of w in gnark's binary form.
func publicBytes(t *testing.T, w witness.Witness) []byte {
	t.Helper()
	pub, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	b, err := pub.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCompactAssignmentRejects: on either curve, a compact assignment that
// is malformed is refused naming what is wrong, a value that is not a
// canonical scalar of the circuit's curve naming its wire; one whose values
// are well formed but wrong is refused by the constraint it breaks. Each
// version's layout is tampered with: BLS12-381's as written (version 2) and
// as a later writer may write it (version 3), BN254's as written (version 3,
// whose curve and reserved fields are tampered with too).
func TestCompactAssignmentRejects(t *testing.T) {
	// merkle: its path bits are internal wires that are 0 and 1.
	forCurves(t, []int{1}, testCompactRejects[fr.Element], testCompactRejects[bnfr.Element])
}

func testCompactRejects[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T, c *Circuit, i int) {
	W := solvedW[S, PS](t, c, i)
	data, err := MarshalCompactAssignment[S, PS](W, c.NbPublic, c.NbSecret, 1)
	if err != nil {
		t.Fatal(err)
	}
	layouts := [][]byte{data}
	if curve.ScalarIDOf[S]() == ecc.BLS12_381 {
		layouts = append(layouts, asVersion3(t, data))
	}
	for _, data := range layouts {
		t.Run(fmt.Sprintf("version%d", binary.BigEndian.Uint32(data[4:])), func(t *testing.T) {
			compactRejects[S, PS](t, c, W, data)
		})
	}
}

// compactRejects tampers with data, the compact assignment of c's wires W,
// in the layout of data's version.
func compactRejects[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T, c *Circuit, W []S, data []byte) {
	id := curve.ScalarIDOf[S]()
	head := compactHeaderOf(t, data)
	nw := int(sdk.CompactWords(uint64(c.NbWires)))
	otherAt, bitsAt := head, head+8*nw
	valuesAt := head + 16*nw
	edit := func(f func(b []byte) []byte) []byte { return f(slices.Clone(data)) }
	word := func(b []byte, at int) uint64 { return binary.LittleEndian.Uint64(b[at:]) }
	setWord := func(b []byte, at int, v uint64) { binary.LittleEndian.PutUint64(b[at:], v) }
	if c.NbWires%64 == 0 {
		t.Fatalf("the test needs a wire count that is not a multiple of 64: %d", c.NbWires)
	}
	oneWire, firstOther := -1, -1 // an internal wire whose value is 1; the first wire neither 0 nor 1
	for k := range W {
		switch {
		case oneWire < 0 && k >= c.NbPublic+c.NbSecret && PS(&W[k]).IsOne():
			oneWire = k
		case firstOther < 0 && !PS(&W[k]).IsZero() && !PS(&W[k]).IsOne():
			firstOther = k
		}
	}
	if oneWire < 0 || firstOther < 0 {
		t.Fatalf("the test circuit has no internal wire equal to 1 (%d) or none neither 0 nor 1 (%d)", oneWire, firstOther)
	}
	// The curve's modulus: the smallest value that is not canonical on it.
	modulus := id.ScalarField().FillBytes(make([]byte, scalarBytes))
	type reject struct {
		name string
		data []byte
		want string
	}
	var rejects []reject
	if head == compactAssignmentHeader {
		// Version 3's curve and reserved fields.
		rejects = []reject{
			{"a curve zkhost does not have", edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[24:], 7); return b }), "names curve 7, which zkhost does not prove on"},
			{"the reserved field set", edit(func(b []byte) []byte { b[compactAssignmentHeader-1] = 1; return b }), "reserved field"},
		}
	}
	for _, tc := range append(rejects, []reject{
		{"header only in part", data[:head-2], fmt.Sprintf("is truncated: %d bytes, shorter than the %d-byte header", head-2, head)},
		{"more values than wires", edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[20:], uint32(c.NbWires+1)); return b }), "neither 0 nor 1"},
		{"truncated", data[:len(data)-1], "truncated, or trailing bytes"},
		{"trailing bytes", append(slices.Clone(data), 0), "truncated, or trailing bytes"},
		{"an unknown version", edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[4:], 4); return b }), "has format version 4"},
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
			copy(b[valuesAt:], slices.Repeat([]byte{0xff}, scalarBytes))
			return b
		}), fmt.Sprintf("wire %d is not a canonical %s scalar", firstOther, curve.Title(id))},
		{"a value equal to the modulus", edit(func(b []byte) []byte {
			copy(b[valuesAt:], modulus)
			return b
		}), fmt.Sprintf("wire %d is not a canonical %s scalar", firstOther, curve.Title(id))},
		{"the constant wire not one", edit(func(b []byte) []byte {
			// wire 0 is 1: its Bits bit is set (1 is not an Other value)
			setWord(b, bitsAt, word(b, bitsAt)&^1)
			return b
		}), "wire 0, the constant one, is 0, want 1"},
	}...) {
		err := parseAssignmentInto[S, PS](tc.data, c, 2, make([]S, c.NbWires))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// A compact partition decodes its values alone: a non-canonical one is
	// named by its wire there too.
	a, err := ReadCompactAssignment[S, PS](edit(func(b []byte) []byte { copy(b[valuesAt:], modulus); return b }), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Values(make([]S, a.NbOther), 2); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("wire %d is not a canonical %s scalar", firstOther, curve.Title(id))) {
		t.Errorf("Values of a value equal to the modulus: %v", err)
	}

	r1cs := c.System.(interface{ GetR1Cs() []constraint.R1C }).GetR1Cs()
	uses := func(constraintID, wire int) bool {
		r := r1cs[constraintID]
		for _, e := range append(append(slices.Clone(r.L), r.R...), r.O...) {
			if e.WireID() == wire && e.CoeffID() != constraint.CoeffIdZero {
				return true
			}
		}
		return false
	}
	// Well formed, but wrong: a wire that is 1 reads 0 (not always breaking
	// the first constraint that uses it: a boolean constraint holds for 0
	// too), or a value is changed; the constraint named uses the wire.
	lastOther := -1
	for k := range W {
		if !PS(&W[k]).IsZero() && !PS(&W[k]).IsOne() {
			lastOther = k
		}
	}
	for _, tc := range []struct {
		name string
		wire int
		data []byte
	}{
		{fmt.Sprintf("wire %d flipped from 1 to 0", oneWire), oneWire, edit(func(b []byte) []byte {
			at := bitsAt + 8*(oneWire/64)
			setWord(b, at, word(b, at)&^(1<<(oneWire%64)))
			return b
		})},
		{fmt.Sprintf("wire %d's value changed", lastOther), lastOther, edit(func(b []byte) []byte {
			b[len(b)-1] ^= 2 // the last value, the last wire neither 0 nor 1
			return b
		})},
	} {
		got := make([]S, c.NbWires)
		if err := parseAssignmentInto[S, PS](tc.data, c, 2, got); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, _, err := Evaluate[S, PS](c, got, 2)
		var ue *UnsatisfiedError
		if !errors.As(err, &ue) {
			t.Fatalf("%s: %v, want a constraint named", tc.name, err)
		}
		if !uses(ue.Constraint, tc.wire) {
			t.Errorf("%s: constraint %d named, which does not use the wire", tc.name, ue.Constraint)
		}
		// The host's path for a full partition names it the same.
		w, a, b := refprover.ScalarMemory(c.NbWires), refprover.ScalarMemory(c.NbConstraints), refprover.ScalarMemory(c.NbConstraints)
		if _, err := SynthesizeInputRaw(c, tc.data, 2, w, a, b); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("does not satisfy constraint %d:", ue.Constraint)) {
			t.Errorf("%s: synthesized: %v, want constraint %d named", tc.name, err, ue.Constraint)
		}
	}
}

// TestCompactAssignmentCrossCurve: a compact assignment of one curve's
// scalars given to the same circuit keyed on the other curve (its counts
// the same, so only the curve tells them apart) is refused at the header,
// naming both curves, as is one read into the other curve's scalars: a
// BLS12-381 one, written as version 2, which names no curve and so means
// BLS12-381, for a BN254 circuit; a BN254 one, version 3, for a BLS12-381
// circuit. A BLS12-381 one of version 3, which no writer makes now but a
// later one may, is read as the version 2 one of the same W, and refused
// for a BN254 circuit the same way.
func TestCompactAssignmentCrossCurve(t *testing.T) {
	for i := range testSpecs {
		bls, bn := loadOn(t, ecc.BLS12_381, i), loadOn(t, ecc.BN254, i)
		if bls.NbWires != bn.NbWires || bls.NbPublic != bn.NbPublic || bls.NbSecret != bn.NbSecret {
			t.Fatalf("%s: the curves' circuits differ in their counts: the test wants the curve alone to differ", testSpecs[i].name)
		}
		blsW, bnW := solvedW[fr.Element](t, bls, i), solvedW[bnfr.Element](t, bn, i)
		blsData, err := MarshalCompactAssignment(blsW, bls.NbPublic, bls.NbSecret, 1)
		if err != nil {
			t.Fatal(err)
		}
		bnData, err := MarshalCompactAssignment(bnW, bn.NbPublic, bn.NbSecret, 1)
		if err != nil {
			t.Fatal(err)
		}
		blsV3 := asVersion3(t, blsData)
		for _, tc := range []struct {
			name string
			data []byte
			c    *Circuit
			want string // "" for accepted
		}{
			{"BLS12-381 (version 2) to BN254", blsData, bn, "is a compact wire assignment of BLS12-381 scalars, circuit " + bn.Name + " is BN254"},
			{"BN254 (version 3) to BLS12-381", bnData, bls, "is a compact wire assignment of BN254 scalars, circuit " + bls.Name + " is BLS12-381"},
			{"BLS12-381 version 3 to BN254", blsV3, bn, "is a compact wire assignment of BLS12-381 scalars, circuit " + bn.Name + " is BN254"},
			{"BLS12-381 (version 2) to BLS12-381", blsData, bls, ""},
			{"BLS12-381 version 3 to BLS12-381", blsV3, bls, ""},
			{"BN254 (version 3) to BN254", bnData, bn, ""},
		} {
			err := CheckInput(tc.data, true, tc.c)
			if tc.want == "" {
				if err != nil {
					t.Errorf("%s: %s: %v", testSpecs[i].name, tc.name, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %s: %v, want %q", testSpecs[i].name, tc.name, err, tc.want)
			}
			w, a, b := refprover.ScalarMemory(tc.c.NbWires), refprover.ScalarMemory(tc.c.NbConstraints), refprover.ScalarMemory(tc.c.NbConstraints)
			if _, err := SynthesizeInputRaw(tc.c, tc.data, 1, w, a, b); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %s, synthesized: %v, want %q", testSpecs[i].name, tc.name, err, tc.want)
			}
		}
		// A BLS12-381 assignment of version 3 reads as the version 2 one of
		// the same W, unpacked or not.
		W := make([]fr.Element, bls.NbWires)
		if err := parseAssignmentInto(blsV3, bls, 1, W); err != nil || !slices.Equal(W, blsW) {
			t.Errorf("%s: version 3 of BLS12-381: %v, or W differs", testSpecs[i].name, err)
		}
		v2, err := ReadCompactAssignment[fr.Element](blsData, bls)
		if err != nil {
			t.Fatal(err)
		}
		v3, err := ReadCompactAssignment[fr.Element](blsV3, bls)
		if err != nil {
			t.Fatal(err)
		}
		values2, values3 := make([]fr.Element, v2.NbOther), make([]fr.Element, v3.NbOther)
		if err := errors.Join(v2.Values(values2, 1), v3.Values(values3, 1)); err != nil || !slices.Equal(v2.Other, v3.Other) || !slices.Equal(v2.Bits, v3.Bits) || !slices.Equal(values2, values3) {
			t.Errorf("%s: version 3 of BLS12-381 read unpacked: %v, or its bitmaps or values differ from version 2's", testSpecs[i].name, err)
		}
		// Scalars of the other curve are refused before the bytes are read.
		if _, err := ReadCompactAssignment[fr.Element](bnData, bn); err == nil || !strings.Contains(err.Error(), "of BLS12-381 scalars for a BN254 circuit") {
			t.Errorf("%s: BLS12-381 scalars for a BN254 circuit: %v", testSpecs[i].name, err)
		}
		if _, _, err := Evaluate(bls, bnW, 1); err == nil || !strings.Contains(err.Error(), "of BN254 scalars for a BLS12-381 circuit") {
			t.Errorf("%s: Evaluate of BN254 scalars for a BLS12-381 circuit: %v", testSpecs[i].name, err)
		}
	}
}

// TestCompactAssignmentVersions: a BLS12-381 assignment is written as
// version 2, which names no curve, so that a cluster's hosts of an older
// build read it, and a BN254 one as version 3, naming its curve: their
// headers byte for byte, the bitmaps right after them, then the values.
func TestCompactAssignmentVersions(t *testing.T) {
	forCurves(t, []int{0, 1}, testCompactVersion[fr.Element], testCompactVersion[bnfr.Element])
}

func testCompactVersion[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T, c *Circuit, i int) {
	W := solvedW[S, PS](t, c, i)
	words := sdk.CompactWords(uint64(c.NbWires))
	other, ones := make([]uint64, words), make([]uint64, words)
	k, err := sdk.PackBitsOf[S, PS](W, other, ones, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The header as each curve's is written, spelled out.
	var version uint32
	var curveField []byte // the curve and the reserved field, version 3's alone
	switch id := curve.ScalarIDOf[S](); id {
	case ecc.BLS12_381:
		version = 2
	case ecc.BN254:
		version = 3
		curveField = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, keyfile.CurveBN254), 0)
	default:
		t.Fatalf("no version for %s", curve.Title(id))
	}
	head := []byte("ZKWA")
	for _, v := range []uint32{version, uint32(c.NbPublic), uint32(c.NbSecret), uint32(c.NbWires), uint32(k)} {
		head = binary.BigEndian.AppendUint32(head, v)
	}
	head = append(head, curveField...)
	bitmaps := []byte{}
	for _, w := range slices.Concat(other, ones) {
		bitmaps = binary.LittleEndian.AppendUint64(bitmaps, w)
	}
	for _, write := range []struct {
		name string
		f    func() ([]byte, error)
	}{
		{"MarshalCompactAssignment", func() ([]byte, error) {
			return MarshalCompactAssignment[S, PS](W, c.NbPublic, c.NbSecret, 2)
		}},
		// What a cluster's synthesis host writes.
		{"MarshalCompactBits", func() ([]byte, error) {
			return MarshalCompactBits[S, PS](W, other, ones, k, c.NbPublic, c.NbSecret, 2)
		}},
	} {
		data, err := write.f()
		if err != nil {
			t.Fatalf("%s: %v", write.name, err)
		}
		if len(data) < len(head) || !bytes.Equal(data[:len(head)], head) {
			t.Fatalf("%s: header % x, want % x", write.name, data[:min(len(data), len(head))], head)
		}
		rest := data[len(head):]
		if len(rest) != len(bitmaps)+int(k)*scalarBytes || !bytes.Equal(rest[:len(bitmaps)], bitmaps) {
			t.Fatalf("%s: %d bytes after the header, want the bitmaps right after it and %d values", write.name, len(rest), k)
		}
		if !IsCompactAssignment(data) {
			t.Errorf("%s: not read as a compact assignment", write.name)
		}
	}
}

// compactHeaderOf is the header size of the compact assignment data, by its
// version.
func compactHeaderOf(t testing.TB, data []byte) int {
	t.Helper()
	switch v := binary.BigEndian.Uint32(data[4:]); v {
	case compactAssignmentV2:
		return compactAssignmentHeaderV2
	case CompactAssignmentVersion:
		return compactAssignmentHeader
	default:
		t.Fatalf("a compact assignment of version %d", v)
		return 0
	}
}

// asVersion3 is a BLS12-381 compact assignment written as version 2 (as
// MarshalCompactAssignment writes BLS12-381's) rewritten as version 3,
// naming BLS12-381: what no writer makes now, but a later one may, and
// every host reads.
func asVersion3(t testing.TB, v2 []byte) []byte {
	t.Helper()
	if v := binary.BigEndian.Uint32(v2[4:]); v != compactAssignmentV2 {
		t.Fatalf("a compact assignment of version %d, want %d", v, compactAssignmentV2)
	}
	b := slices.Concat(v2[:compactAssignmentHeaderV2], make([]byte, compactAssignmentHeader-compactAssignmentHeaderV2), v2[compactAssignmentHeaderV2:])
	binary.BigEndian.PutUint32(b[4:], CompactAssignmentVersion)
	binary.BigEndian.PutUint32(b[24:], keyfile.CurveBLS12381)
	return b
}

// TestInputSizeRange: a streamed input's declared size is held to the
// circuit's: exactly for a witness, within the compact format's bounds for
// an assignment (from version 2's header and bitmaps alone to version 3's
// with every value), which hold the full format's size, on either curve.
func TestInputSizeRange(t *testing.T) {
	for _, id := range []ecc.ID{ecc.BLS12_381, ecc.BN254} {
		c := loadOn(t, id, 0)
		if lo, hi := InputSizeRange(c, false); lo != InputSize(c, false) || hi != lo {
			t.Errorf("%s: a witness: %d to %d, want exactly %d", c.Name, lo, hi, InputSize(c, false))
		}
		lo, hi := InputSizeRange(c, true)
		if full := InputSize(c, true); full < lo || full > hi {
			t.Errorf("%s: a full assignment's %d bytes outside %d to %d", c.Name, full, lo, hi)
		}
		if want := compactAssignmentSize(compactAssignmentHeaderV2, uint64(c.NbWires), 0); lo != want {
			t.Errorf("%s: lowest %d, want %d", c.Name, lo, want)
		}
		if want := compactAssignmentSize(compactAssignmentHeader, uint64(c.NbWires), uint64(c.NbWires)); hi != want {
			t.Errorf("%s: highest %d, want %d", c.Name, hi, want)
		}
	}
}
