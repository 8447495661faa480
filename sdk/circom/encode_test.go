package circom

import (
	"encoding/binary"
	"math/big"
)

// A test-only encoder for the formats, written from the same specification as the readers. The
// round-trip tests check it against the files circom2 and snarkjs wrote, byte for byte, so the
// malformed files built with it differ from real ones only where a test means them to.

// testSection is one section of a binary container, in file order.
type testSection struct {
	sectionType uint32
	content     []byte
}

func encodeBinFile(magic string, version uint32, sections []testSection) []byte {
	out := []byte(magic)
	out = binary.LittleEndian.AppendUint32(out, version)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(sections)))
	for _, s := range sections {
		out = binary.LittleEndian.AppendUint32(out, s.sectionType)
		out = binary.LittleEndian.AppendUint64(out, uint64(len(s.content)))
		out = append(out, s.content...)
	}
	return out
}

// littleEndian32 encodes a value below 2^256 as 32 little-endian bytes.
func littleEndian32(v *big.Int) []byte {
	var e FieldElement
	b := v.Bytes()
	for i := range b {
		e[i] = b[len(b)-1-i]
	}
	return e[:]
}

func encodeFieldHeader(prime *big.Int) []byte {
	out := binary.LittleEndian.AppendUint32(nil, FieldElementSize)
	return append(out, littleEndian32(prime)...)
}

func encodeR1CSHeader(cs *R1CS, numConstraints uint32) []byte {
	out := encodeFieldHeader(cs.Prime)
	for _, count := range []uint32{cs.NumWires, cs.NumPublicOutputs, cs.NumPublicInputs, cs.NumPrivateInputs} {
		out = binary.LittleEndian.AppendUint32(out, count)
	}
	out = binary.LittleEndian.AppendUint64(out, cs.NumLabels)
	return binary.LittleEndian.AppendUint32(out, numConstraints)
}

func encodeLinearCombination(out []byte, lc LinearCombination) []byte {
	out = binary.LittleEndian.AppendUint32(out, uint32(len(lc)))
	for _, term := range lc {
		out = binary.LittleEndian.AppendUint32(out, term.Wire)
		out = append(out, term.Coefficient[:]...)
	}
	return out
}

func encodeConstraints(constraints []Constraint) []byte {
	var out []byte
	for _, c := range constraints {
		out = encodeLinearCombination(out, c.A)
		out = encodeLinearCombination(out, c.B)
		out = encodeLinearCombination(out, c.C)
	}
	return out
}

func encodeWireToLabel(labels []uint64) []byte {
	var out []byte
	for _, label := range labels {
		out = binary.LittleEndian.AppendUint64(out, label)
	}
	return out
}

// r1csSections gives the sections of cs in the order circom writes them: the constraints before
// the header.
func r1csSections(cs *R1CS) []testSection {
	sections := []testSection{
		{r1csSectionConstraints, encodeConstraints(cs.Constraints)},
		{r1csSectionHeader, encodeR1CSHeader(cs, uint32(len(cs.Constraints)))},
	}
	if cs.WireToLabel != nil {
		sections = append(sections, testSection{r1csSectionWireToLabel, encodeWireToLabel(cs.WireToLabel)})
	}
	return sections
}

func encodeR1CS(cs *R1CS) []byte {
	return encodeBinFile("r1cs", r1csVersion, r1csSections(cs))
}

func wtnsSections(w *Witness) []testSection {
	header := binary.LittleEndian.AppendUint32(encodeFieldHeader(w.Prime), uint32(len(w.Values)))
	var values []byte
	for _, v := range w.Values {
		values = append(values, v[:]...)
	}
	return []testSection{{wtnsSectionHeader, header}, {wtnsSectionValues, values}}
}

func encodeWitness(w *Witness) []byte {
	return encodeBinFile("wtns", wtnsVersion, wtnsSections(w))
}
