package circom

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
)

// Section types of a .wtns file (snarkjs's wtns_utils).
const (
	wtnsSectionHeader = 1
	wtnsSectionValues = 2
)

// wtnsVersion is the version snarkjs and circom's witness generators write.
const wtnsVersion = 2

// Witness is a circom witness: the value of every wire of a circuit, wire 0 (the constant 1)
// first, in the wire order of the circuit's .r1cs.
type Witness struct {
	Curve  ecc.ID   // ecc.BN254 or ecc.BLS12_381, whose scalar field is Prime
	Prime  *big.Int // the field's modulus, as the file states it
	Values []FieldElement
}

// ReadWitness reads a .wtns file.
func ReadWitness(path string) (*Witness, error) { return readFile(path, ParseWitness) }

// ParseWitness parses the bytes of a .wtns file: a header section with the field and the number
// of values, and a section with the values.
func ParseWitness(data []byte) (*Witness, error) {
	field, values, err := parseWitnessHeader(data)
	if err != nil {
		return nil, err
	}
	w := &Witness{Curve: field.curve, Prime: field.prime, Values: make([]FieldElement, len(values)/FieldElementSize)}
	r := byteReader{data: values}
	scratch := new(big.Int)
	for i := range w.Values {
		r.what = fmt.Sprintf("witness value %d", i)
		if w.Values[i], err = readFieldElement(&r, w.Prime, scratch); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// WitnessSize is the size of a .wtns file of n values as snarkjs and circom's witness
// generators write it: the file header (12 bytes), the header section (12 + 40) and the values
// section (12 + 32·n).
func WitnessSize(n uint64) int64 { return 76 + int64(n)*FieldElementSize }

// ParseWitnessHeader reads what a .wtns file says of itself without reading its values: its
// curve and how many values it holds. It checks the container and that the values section has
// the size of that many values, so that ParseWitness of the same bytes fails only on a value not
// below the prime. It is cheap whatever the file's size.
func ParseWitnessHeader(data []byte) (curve ecc.ID, numValues uint32, err error) {
	field, values, err := parseWitnessHeader(data)
	if err != nil {
		return ecc.UNKNOWN, 0, err
	}
	return field.curve, uint32(len(values) / FieldElementSize), nil
}

// WitnessValues is ParseWitnessHeader that also returns the values section: each value's
// FieldElementSize little-endian bytes, in wire order, not yet checked against the prime.
// A reader that decodes them into scalars checks each itself (ParseWitness's big.Int
// per value is what it saves).
func WitnessValues(data []byte) (curve ecc.ID, values []byte, err error) {
	field, values, err := parseWitnessHeader(data)
	if err != nil {
		return ecc.UNKNOWN, nil, err
	}
	return field.curve, values, nil
}

// parseWitnessHeader checks a .wtns file's container and header section and returns the field
// and the values section, whose size it has checked against the header's count.
func parseWitnessHeader(data []byte) (fieldHeader, []byte, error) {
	f, err := parseBinFile(data, "wtns", wtnsVersion)
	if err != nil {
		return fieldHeader{}, nil, err
	}
	header, _, err := f.uniqueSection(wtnsSectionHeader, "header", true)
	if err != nil {
		return fieldHeader{}, nil, err
	}
	r := byteReader{data: header, what: "wtns header section"}
	field, err := readFieldHeader(&r)
	if err != nil {
		return fieldHeader{}, nil, err
	}
	numValues, err := r.uint32()
	if err != nil {
		return fieldHeader{}, nil, err
	}
	if err := r.expectEnd(); err != nil {
		return fieldHeader{}, nil, err
	}
	values, _, err := f.uniqueSection(wtnsSectionValues, "values", true)
	if err != nil {
		return fieldHeader{}, nil, err
	}
	if uint64(len(values)) != uint64(numValues)*FieldElementSize {
		return fieldHeader{}, nil, fmt.Errorf("%w: values section of %d bytes, want %d for the %d values the header states",
			ErrSections, len(values), uint64(numValues)*FieldElementSize, numValues)
	}
	return field, values, nil
}
