package circom

import (
	"fmt"
	"math/big"
	"os"

	"github.com/consensys/gnark-crypto/ecc"
)

// Section types of an .r1cs file (r1csfile's R1CS_FILE_*_SECTION).
const (
	r1csSectionHeader          = 1
	r1csSectionConstraints     = 2
	r1csSectionWireToLabel     = 3
	r1csSectionCustomGatesList = 4
	r1csSectionCustomGatesUses = 5
)

// r1csVersion is the only .r1cs version there is.
const r1csVersion = 1

// R1CS is a circom constraint system: constraints A·B = C over the wires of a circuit.
//
// Wires are numbered as circom numbers them: wire 0 is the constant 1, then the public outputs,
// the public inputs, the private inputs, and the internal wires. The public values of a proof are
// wires 1 to NumPublicOutputs+NumPublicInputs, outputs first.
type R1CS struct {
	Curve ecc.ID   // ecc.BN254 or ecc.BLS12_381, whose scalar field is Prime
	Prime *big.Int // the field's modulus, as the file states it

	NumWires         uint32 // all wires, wire 0 included
	NumPublicOutputs uint32
	NumPublicInputs  uint32
	NumPrivateInputs uint32
	NumLabels        uint64 // signals of the source circuit, before circom's optimisations removed some

	Constraints []Constraint

	// WireToLabel maps each wire to its signal label (an index below NumLabels), for naming
	// wires in messages. Nil when the file has no such section; circom always writes it.
	WireToLabel []uint64
}

// Constraint is one rank-1 constraint: (A·w) × (B·w) = (C·w) for the assignment w.
type Constraint struct {
	A, B, C LinearCombination
}

// LinearCombination is a sparse sum of coefficient × wire, in the file's order, which circom does
// not sort by wire. A wire that appeared twice would count twice, as the sum says; nothing here
// relies on wires being sorted or distinct.
type LinearCombination []Term

// Term is one coefficient × wire of a linear combination.
type Term struct {
	Wire        uint32
	Coefficient FieldElement // below Prime
}

// NumPublic is the number of public values of a proof: the outputs and the public inputs.
func (cs *R1CS) NumPublic() int {
	return int(cs.NumPublicOutputs) + int(cs.NumPublicInputs)
}

// ReadR1CS reads an .r1cs file.
func ReadR1CS(path string) (*R1CS, error) { return readFile(path, ParseR1CS) }

// readFile reads the file at path and parses it with parse, naming the file in
// a parse error.
func readFile[T any](path string, parse func([]byte) (T, error)) (T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := parse(data)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// ParseR1CS parses the bytes of an .r1cs file. It refuses a file that uses custom gates: they
// exist for PLONK, and a Groth16 prover cannot honour them. Sections of types it does not know
// are skipped, as iden3's readers skip them.
func ParseR1CS(data []byte) (*R1CS, error) {
	f, err := parseBinFile(data, "r1cs", r1csVersion)
	if err != nil {
		return nil, err
	}
	if len(f.sections[r1csSectionCustomGatesList]) > 0 || len(f.sections[r1csSectionCustomGatesUses]) > 0 {
		return nil, fmt.Errorf("%w: the r1cs has custom gate sections, from circom's custom templates, which only PLONK can prove; compile the circuit without them for Groth16", ErrCustomGates)
	}

	header, _, err := f.uniqueSection(r1csSectionHeader, "header", true)
	if err != nil {
		return nil, err
	}
	cs, numConstraints, err := parseR1CSHeader(header)
	if err != nil {
		return nil, err
	}

	constraints, _, err := f.uniqueSection(r1csSectionConstraints, "constraints", true)
	if err != nil {
		return nil, err
	}
	if cs.Constraints, err = parseConstraints(constraints, cs, numConstraints); err != nil {
		return nil, err
	}

	wireToLabel, found, err := f.uniqueSection(r1csSectionWireToLabel, "wire-to-label", false)
	if err != nil {
		return nil, err
	}
	if found {
		if cs.WireToLabel, err = parseWireToLabel(wireToLabel, cs); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// parseR1CSHeader reads the header section: the field, the wire and label counts, and the
// number of constraints, which the constraints section is then read against.
func parseR1CSHeader(content []byte) (cs *R1CS, numConstraints uint32, err error) {
	r := byteReader{data: content, what: "r1cs header section"}
	field, err := readFieldHeader(&r)
	if err != nil {
		return nil, 0, err
	}
	cs = &R1CS{Curve: field.curve, Prime: field.prime}
	for _, count := range []*uint32{&cs.NumWires, &cs.NumPublicOutputs, &cs.NumPublicInputs, &cs.NumPrivateInputs} {
		if *count, err = r.uint32(); err != nil {
			return nil, 0, err
		}
	}
	if cs.NumLabels, err = r.uint64(); err != nil {
		return nil, 0, err
	}
	if numConstraints, err = r.uint32(); err != nil {
		return nil, 0, err
	}
	if err := r.expectEnd(); err != nil {
		return nil, 0, err
	}
	// Wire 0 and the inputs and outputs are wires, so they cannot outnumber them. Summed in 64
	// bits so that counts near the uint32 limit cannot wrap.
	named := 1 + uint64(cs.NumPublicOutputs) + uint64(cs.NumPublicInputs) + uint64(cs.NumPrivateInputs)
	if named > uint64(cs.NumWires) {
		return nil, 0, fmt.Errorf("%w: r1cs header: %d wires cannot hold the constant wire, %d outputs, %d public and %d private inputs",
			ErrWireIndex, cs.NumWires, cs.NumPublicOutputs, cs.NumPublicInputs, cs.NumPrivateInputs)
	}
	return cs, numConstraints, nil
}

// Smallest encodings, used to bound a count by the bytes that must back it before allocating.
const (
	minConstraintSize = 3 * 4                // three empty linear combinations: their term counts
	termSize          = 4 + FieldElementSize // wire index and coefficient
)

// parseConstraints reads the constraints section: for each constraint, A, B and C, each as a
// term count (uint32) followed by that many terms of wire index (uint32) and coefficient.
func parseConstraints(content []byte, cs *R1CS, numConstraints uint32) ([]Constraint, error) {
	if uint64(numConstraints)*minConstraintSize > uint64(len(content)) {
		return nil, fmt.Errorf("%w: constraints section of %d bytes cannot hold the %d constraints the header states",
			ErrTruncated, len(content), numConstraints)
	}
	r := byteReader{data: content}
	scratch := new(big.Int)
	constraints := make([]Constraint, numConstraints)
	for i := range constraints {
		c := &constraints[i]
		for j, lc := range []*LinearCombination{&c.A, &c.B, &c.C} {
			r.what = fmt.Sprintf("constraint %d, %c", i, "ABC"[j])
			var err error
			if *lc, err = parseLinearCombination(&r, cs, scratch); err != nil {
				return nil, err
			}
		}
	}
	r.what = "constraints section"
	if err := r.expectEnd(); err != nil {
		return nil, err
	}
	return constraints, nil
}

func parseLinearCombination(r *byteReader, cs *R1CS, scratch *big.Int) (LinearCombination, error) {
	numTerms, err := r.uint32()
	if err != nil {
		return nil, err
	}
	if uint64(numTerms)*termSize > uint64(r.remaining()) {
		return nil, fmt.Errorf("%w: %s: %d terms need %d bytes, %d remain",
			ErrTruncated, r.what, numTerms, uint64(numTerms)*termSize, r.remaining())
	}
	lc := make(LinearCombination, numTerms)
	for k := range lc {
		wire, _ := r.uint32()
		if wire >= cs.NumWires {
			return nil, fmt.Errorf("%w: %s, term %d: wire %d, the circuit has %d wires", ErrWireIndex, r.what, k, wire, cs.NumWires)
		}
		coefficient, err := readFieldElement(r, cs.Prime, scratch)
		if err != nil {
			return nil, fmt.Errorf("%w (term %d)", err, k)
		}
		lc[k] = Term{Wire: wire, Coefficient: coefficient}
	}
	return lc, nil
}

// parseWireToLabel reads the wire-to-label section: one label (uint64) per wire.
func parseWireToLabel(content []byte, cs *R1CS) ([]uint64, error) {
	if uint64(len(content)) != 8*uint64(cs.NumWires) {
		return nil, fmt.Errorf("%w: wire-to-label section of %d bytes, want 8 for each of %d wires",
			ErrSections, len(content), cs.NumWires)
	}
	r := byteReader{data: content, what: "wire-to-label section"}
	labels := make([]uint64, cs.NumWires)
	for i := range labels {
		labels[i], _ = r.uint64()
		if labels[i] >= cs.NumLabels {
			return nil, fmt.Errorf("%w: wire-to-label section: wire %d has label %d, the circuit has %d labels",
				ErrWireIndex, i, labels[i], cs.NumLabels)
		}
	}
	return labels, nil
}
