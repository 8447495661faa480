package circom

import (
	"encoding/binary"
	"errors"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
)

// Malformed files, each built from a real one with one thing wrong, and the sentinel error each
// must give. The message must also name what is wrong, so each case says a word it expects in it.

// malformedCase is a malformed file, the sentinel error it must give, and a word the error's
// message must contain.
type malformedCase struct {
	name    string
	data    []byte
	want    error
	mention string
}

// runMalformed checks that parse refuses every case with its sentinel error and a message that
// names what is wrong.
func runMalformed[T any](t *testing.T, cases []malformedCase, parse func([]byte) (T, error)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := parse(c.data)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, %v; want %v", v, err, c.want)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Errorf("error %q does not mention %q", err, c.mention)
			}
		})
	}
}

// validMultiplier is the real BN254 multiplier r1cs, read, for the cases to change.
func validMultiplier(t testing.TB) *R1CS {
	t.Helper()
	return mustReadR1CS(t, "multiplier", "bn128")
}

// withSections encodes the multiplier's sections after change has altered them.
func withSections(t testing.TB, change func(sections []testSection) []testSection) []byte {
	return encodeBinFile("r1cs", r1csVersion, change(r1csSections(validMultiplier(t))))
}

// withR1CS encodes the multiplier after change has altered its parsed form.
func withR1CS(t testing.TB, change func(cs *R1CS)) []byte {
	cs := validMultiplier(t)
	change(cs)
	return encodeR1CS(cs)
}

// sectionIndex finds a section by type in circom's order (constraints, header, wire-to-label).
func sectionIndex(sections []testSection, sectionType uint32) int {
	for i, s := range sections {
		if s.sectionType == sectionType {
			return i
		}
	}
	panic("no such section")
}

func TestParseR1CSMalformed(t *testing.T) {
	real, err := os.ReadFile(testdataPath("multiplier", "bn128", ".r1cs"))
	if err != nil {
		t.Fatal(err)
	}
	header := func(sections []testSection) *testSection {
		return &sections[sectionIndex(sections, r1csSectionHeader)]
	}
	// Offsets inside the header section: field size, prime, then the counts.
	const (
		headerPrime          = 4
		headerNumWires       = headerPrime + FieldElementSize
		headerNumPrivate     = headerNumWires + 12
		headerNumConstraints = headerNumWires + 24
	)
	// setHeaderU32 is the real file with the header's uint32 at off set to v.
	setHeaderU32 := func(off int, v uint32) []byte {
		return withSections(t, func(s []testSection) []testSection {
			binary.LittleEndian.PutUint32(header(s).content[off:], v)
			return s
		})
	}
	cases := []malformedCase{
		{"empty", nil, ErrTruncated, "file header"},
		{"magic only", []byte("r1cs"), ErrTruncated, "file header"},
		{"cut inside a section", real[:len(real)/2], ErrTruncated, "remain"},
		{"cut inside a section header", real[:14], ErrTruncated, "section header 0"},
		{"wtns magic", append([]byte("wtns"), real[4:]...), ErrMagic, `"wtns"`},
		{"version 2", withVersion(real, 2), ErrVersion, "version 2"},
		{"bytes after the last section", append(append([]byte{}, real...), 0), ErrSections, "after the last"},
		{"one section fewer than the count", withSectionCount(real, 4), ErrTruncated, "section header 3"},
		{"no header section", withSections(t, func(s []testSection) []testSection {
			return append(s[:1:1], s[2:]...)
		}), ErrSections, "no header section"},
		{"no constraints section", withSections(t, func(s []testSection) []testSection {
			return s[1:]
		}), ErrSections, "no constraints section"},
		{"two constraints sections", withSections(t, func(s []testSection) []testSection {
			return append(s, s[0])
		}), ErrSections, "2 constraints sections"},
		{"two wire-to-label sections", withSections(t, func(s []testSection) []testSection {
			return append(s, s[2])
		}), ErrSections, "wire-to-label"},
		{"custom gates list", withSections(t, func(s []testSection) []testSection {
			return append(s, testSection{r1csSectionCustomGatesList, []byte{0, 0, 0, 0}})
		}), ErrCustomGates, "custom gate"},
		{"custom gates uses", withSections(t, func(s []testSection) []testSection {
			return append(s, testSection{r1csSectionCustomGatesUses, []byte{0, 0, 0, 0}})
		}), ErrCustomGates, "custom gate"},
		{"field size 48", withSections(t, func(s []testSection) []testSection {
			binary.LittleEndian.PutUint32(header(s).content, 48)
			return s
		}), ErrFieldSize, "48 bytes"},
		{"prime of no supported curve", withR1CS(t, func(cs *R1CS) {
			cs.Prime = new(big.Int).Add(cs.Prime, big.NewInt(2))
		}), ErrUnknownPrime, "neither BN254 nor BLS12-381"},
		{"BN254 base field", withR1CS(t, func(cs *R1CS) {
			cs.Prime = ecc.BN254.BaseField()
		}), ErrUnknownPrime, "neither"},
		{"header section too long", withSections(t, func(s []testSection) []testSection {
			header(s).content = append(header(s).content, 0)
			return s
		}), ErrSections, "r1cs header section: 1 bytes left over"},
		{"header section too short", withSections(t, func(s []testSection) []testSection {
			header(s).content = header(s).content[:len(header(s).content)-1]
			return s
		}), ErrTruncated, "r1cs header section"},
		{"more inputs than wires", setHeaderU32(headerNumPrivate, 4), ErrWireIndex, "4 wires cannot hold"},
		{"input counts that wrap in 32 bits", setHeaderU32(headerNumPrivate, 0xffffffff), ErrWireIndex, "cannot hold"},
		{"more constraints than the section holds", setHeaderU32(headerNumConstraints, 0xffffffff), ErrTruncated, "4294967295 constraints"},
		{"fewer constraints than the section holds", setHeaderU32(headerNumConstraints, 0), ErrSections, "constraints section: 120 bytes left over"},
		{"term count past the section", withSections(t, func(s []testSection) []testSection {
			binary.LittleEndian.PutUint32(s[sectionIndex(s, r1csSectionConstraints)].content, 0xffffffff)
			return s
		}), ErrTruncated, "constraint 0, A: 4294967295 terms"},
		{"coefficient equal to the prime", withR1CS(t, func(cs *R1CS) {
			cs.Constraints[0].B[0].Coefficient = FieldElement(littleEndian32(cs.Prime))
		}), ErrNotCanonical, "constraint 0, B"},
		{"coefficient all ones", withR1CS(t, func(cs *R1CS) {
			for i := range cs.Constraints[0].C[0].Coefficient {
				cs.Constraints[0].C[0].Coefficient[i] = 0xff
			}
		}), ErrNotCanonical, "constraint 0, C"},
		{"wire index equal to the wire count", withR1CS(t, func(cs *R1CS) {
			cs.Constraints[0].C[0].Wire = cs.NumWires
		}), ErrWireIndex, "constraint 0, C, term 0: wire 4"},
		{"wire-to-label one wire short", withR1CS(t, func(cs *R1CS) {
			cs.WireToLabel = cs.WireToLabel[:len(cs.WireToLabel)-1]
		}), ErrSections, "wire-to-label section of 24 bytes"},
		{"label out of range", withR1CS(t, func(cs *R1CS) {
			cs.WireToLabel[3] = cs.NumLabels
		}), ErrWireIndex, "wire 3 has label 4"},
		{"section size past the end", withSectionSize(real, 1<<62), ErrTruncated, "says 4611686018427387904 bytes"},
	}
	runMalformed(t, cases, ParseR1CS)
}

// withVersion, withSectionCount and withSectionSize change one field of a real file's
// container: the version, the number of sections, the first section's size.
func withVersion(data []byte, version uint32) []byte {
	out := append([]byte{}, data...)
	binary.LittleEndian.PutUint32(out[4:], version)
	return out
}

func withSectionCount(data []byte, count uint32) []byte {
	out := append([]byte{}, data...)
	binary.LittleEndian.PutUint32(out[8:], count)
	return out
}

func withSectionSize(data []byte, size uint64) []byte {
	out := append([]byte{}, data...)
	binary.LittleEndian.PutUint64(out[16:], size)
	return out
}

// A section of a type this package does not know is skipped, as iden3's readers skip it: a
// later format revision may add one.
func TestParseR1CSSkipsUnknownSection(t *testing.T) {
	data := withSections(t, func(s []testSection) []testSection {
		return append(s, testSection{99, []byte("a section from the future")})
	})
	cs, err := ParseR1CS(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Constraints) != 1 {
		t.Errorf("%d constraints, want 1", len(cs.Constraints))
	}
}

// The wire-to-label section is optional: other tools than circom may leave it out.
func TestParseR1CSWithoutWireToLabel(t *testing.T) {
	cs, err := ParseR1CS(withR1CS(t, func(cs *R1CS) { cs.WireToLabel = nil }))
	if err != nil {
		t.Fatal(err)
	}
	if cs.WireToLabel != nil || len(cs.Constraints) != 1 {
		t.Errorf("labels %v, %d constraints", cs.WireToLabel, len(cs.Constraints))
	}
}

func TestParseWitnessMalformed(t *testing.T) {
	real, err := os.ReadFile(testdataPath("multiplier", "bn128", ".wtns"))
	if err != nil {
		t.Fatal(err)
	}
	withWitness := func(change func(w *Witness)) []byte {
		w := mustReadWitness(t, "multiplier", "bn128")
		change(w)
		return encodeWitness(w)
	}
	withWtnsSections := func(change func(s []testSection) []testSection) []byte {
		return encodeBinFile("wtns", wtnsVersion, change(wtnsSections(mustReadWitness(t, "multiplier", "bn128"))))
	}
	const headerNumValues = 4 + FieldElementSize
	cases := []malformedCase{
		{"empty", nil, ErrTruncated, "file header"},
		{"cut in the values", real[:len(real)-1], ErrTruncated, "remain"},
		{"r1cs magic", append([]byte("r1cs"), real[4:]...), ErrMagic, `"r1cs"`},
		{"version 1", withVersion(real, 1), ErrVersion, "version 1"},
		{"version 3", withVersion(real, 3), ErrVersion, "version 3"},
		{"bytes after the last section", append(append([]byte{}, real...), 0, 0), ErrSections, "2 bytes after"},
		{"no values section", withWtnsSections(func(s []testSection) []testSection { return s[:1] }), ErrSections, "no values section"},
		{"two header sections", withWtnsSections(func(s []testSection) []testSection { return append(s, s[0]) }), ErrSections, "2 header sections"},
		{"field size 8", withWtnsSections(func(s []testSection) []testSection {
			binary.LittleEndian.PutUint32(s[0].content, 8)
			return s
		}), ErrFieldSize, "8 bytes"},
		{"prime of no supported curve", withWitness(func(w *Witness) {
			w.Prime = big.NewInt(101)
		}), ErrUnknownPrime, "101"},
		{"header section too long", withWtnsSections(func(s []testSection) []testSection {
			s[0].content = append(s[0].content, 0)
			return s
		}), ErrSections, "wtns header section: 1 bytes left over"},
		{"more values stated than stored", withWtnsSections(func(s []testSection) []testSection {
			binary.LittleEndian.PutUint32(s[0].content[headerNumValues:], 0xffffffff)
			return s
		}), ErrSections, "4294967295 values"},
		{"values section not whole elements", withWtnsSections(func(s []testSection) []testSection {
			s[1].content = append(s[1].content, 0)
			return s
		}), ErrSections, "values section of 129 bytes"},
		{"value equal to the prime", withWitness(func(w *Witness) {
			w.Values[3] = FieldElement(littleEndian32(w.Prime))
		}), ErrNotCanonical, "witness value 3"},
	}
	runMalformed(t, cases, ParseWitness)
}
